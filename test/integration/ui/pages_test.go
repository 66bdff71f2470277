/*
Copyright 2026 The Gantry Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/util"
)

func runtime(name string, deprecated bool) *trainer.ClusterTrainingRuntime {
	labels := map[string]string{trainer.FrameworkLabel: "torch"}
	if deprecated {
		labels[trainer.SupportLabel] = trainer.SupportDeprecated
	}
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{
				Name: "node", Replicas: 1,
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{{Name: "node", Image: "pytorch/pytorch:2.7.1"}},
				}}}},
			}}}},
		},
	}
}

func trainJob(ns, name, rt string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: rt}},
	}
}

func setStatus(tj *trainer.TrainJob, mutate func(*trainer.TrainJobStatus)) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func() error {
		cur := &trainer.TrainJob{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur); err != nil {
			return err
		}
		mutate(&cur.Status)
		return k8sClient.Status().Update(ctx, cur)
	}).Should(gomega.Succeed())
}

var rowState = regexp.MustCompile(`<tr data-job="([^"]+)" data-state="(\w+)">`)

func states(html string) map[string]string {
	out := map[string]string{}
	for _, m := range rowState.FindAllStringSubmatch(html, -1) {
		out[m[1]] = m[2]
	}
	return out
}

var _ = ginkgo.Describe("the web UI", ginkgo.Ordered, func() {
	var ns string
	ginkgo.BeforeAll(func() {
		for _, rt := range []*trainer.ClusterTrainingRuntime{runtime("ui-torch", false), runtime("ui-old", true), runtime("ui-spare", false)} {
			gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		}
		ns = util.NewNamespace(ctx, k8sClient, "ui")
		for _, n := range []string{"a", "b"} {
			gomega.Expect(k8sClient.Create(ctx, trainJob(ns, n, "ui-torch"))).To(gomega.Succeed())
		}
		gomega.Expect(k8sClient.Create(ctx, trainJob(ns, "c", "ui-old"))).To(gomega.Succeed())
	})

	ginkgo.It("lists the jobs with the command line's states, and filters by the query string", func() {
		gomega.Eventually(func() map[string]string {
			_, body := get("/jobs?ns=" + ns)
			return states(body)
		}).Should(gomega.Equal(map[string]string{ns + "/a": "Created", ns + "/b": "Created", ns + "/c": "Created"}))
		_, body := get("/jobs?ns=" + ns + "&runtime=ui-old")
		gomega.Expect(states(body)).To(gomega.Equal(map[string]string{ns + "/c": "Created"}))
		code, body := get("/jobs?state=Bogus")
		gomega.Expect(code).To(gomega.Equal(http.StatusBadRequest))
		gomega.Expect(body).To(gomega.ContainSubstring(`unknown state &#34;Bogus&#34;`))
	})

	ginkgo.It("changes a row's state chip within 1 s of the job completing, without a reload", func() {
		events := subscribe("/live/jobs?ns=" + ns)
		first := next(events, "rows", 5*time.Second)
		gomega.Expect(states(first.data)).To(gomega.HaveKeyWithValue(ns+"/a", "Created"))
		gomega.Expect(next(events, "pager", 5*time.Second).data).To(gomega.ContainSubstring(`<span class="count">1–3 of 3</span>`))
		tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "a"}}
		start := time.Now()
		setStatus(tj, func(st *trainer.TrainJobStatus) {
			st.Conditions = []metav1.Condition{{Type: "Complete", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted",
				Message: "done", LastTransitionTime: metav1.Now()}}
		})
		for {
			ev := next(events, "rows", 2*time.Second)
			if states(ev.data)[ns+"/a"] == "Complete" {
				break
			}
		}
		gomega.Expect(time.Since(start)).To(gomega.BeNumerically("<", time.Second))
	})

	ginkgo.It("draws every progress report of a job", func() {
		tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "b"}}
		events := subscribe(fmt.Sprintf("/live/jobs/%s/b?tab=progress", ns))
		next(events, "curves", 5*time.Second)
		base := time.Now().Add(-time.Hour)
		var loss ui.Curve
		for i := range 20 {
			setStatus(tj, func(st *trainer.TrainJobStatus) {
				st.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To(int32(i * 5)),
					Metrics:         []trainer.Metric{{Name: "loss", Value: fmt.Sprintf("%.1f", 2.0-float64(i)*0.1)}},
					LastUpdatedTime: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}
			})
			// Each report is sampled from the informer: wait until the page has it before the next.
			gomega.Eventually(func() int {
				var curves []ui.Curve
				gomega.Expect(json.Unmarshal([]byte(next(events, "curves", 5*time.Second).data), &curves)).To(gomega.Succeed())
				for _, c := range curves {
					if c.Name == "loss" {
						loss = c
					}
				}
				return len(loss.Values)
			}).Should(gomega.Equal(i + 1))
		}
		gomega.Expect(loss.Values[0]).To(gomega.Equal(2.0))
		gomega.Expect(loss.Values[19]).To(gomega.Equal(0.1))
	})

	ginkgo.It("shows steps and events of a job", func() {
		gomega.Expect(k8sClient.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "c-node-0-0-abcde", Labels: map[string]string{
				jobset.JobSetNameKey: "c", jobset.ReplicatedJobNameKey: "node", batchv1.JobCompletionIndexAnnotation: "0"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "x"}}},
		})).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: "c-fail"},
			InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "c-node-0-0-abcde", Namespace: ns},
			Reason:         "BackOff", Message: "Back-off restarting failed container", Type: corev1.EventTypeWarning,
			LastTimestamp: metav1.NewTime(time.Now().Add(-2 * time.Minute)),
		})).To(gomega.Succeed())
		gomega.Eventually(func() string { _, b := get(fmt.Sprintf("/jobs/%s/c", ns)); return b }).
			Should(gomega.ContainSubstring(`<tr data-step="node-0">`))
		_, body := get(fmt.Sprintf("/jobs/%s/c?tab=events", ns))
		gomega.Expect(body).To(gomega.MatchRegexp(`<tr data-reason="BackOff">\s*<td><time datetime="[^"]+">2m</time></td><td>Warning</td><td>BackOff</td>`))
		code, _ := get(fmt.Sprintf("/jobs/%s/nope", ns))
		gomega.Expect(code).To(gomega.Equal(http.StatusNotFound))
	})

	ginkgo.It("shows a card per runtime with the jobs using it", func() {
		_, body := get("/runtimes")
		for name, uses := range map[string]string{"ui-torch": "2", "ui-old": "1", "ui-spare": "0"} {
			card := regexp.MustCompile(`(?s)<article class="card[^"]*" data-runtime="ClusterTrainingRuntime/` + name + `">.*?</article>`).FindString(body)
			gomega.Expect(card).To(gomega.ContainSubstring(`<dd class="uses">`+uses+`</dd>`), name)
			gomega.Expect(strings.Contains(card, "deprecated")).To(gomega.Equal(name == "ui-old"), name)
			gomega.Expect(card).To(gomega.ContainSubstring("kubectl gantry train --runtime " + name))
		}
	})
})

var _ = ginkgo.Describe("--history=configmap", func() {
	ginkgo.It("keeps the curves across a restart of the UI, in a ConfigMap owned by the job", func() {
		ns := util.NewNamespace(ctx, k8sClient, "history")
		gomega.Expect(k8sClient.Create(ctx, runtime("hist-torch", false))).To(gomega.Succeed())
		tj := trainJob(ns, "h", "hist-torch")
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		start := func() (*ui.Store, context.CancelFunc) {
			c, stop := context.WithCancel(ctx)
			st, err := ui.NewStore(fwk.Config, ui.StoreOptions{Namespaces: []string{ns}, PersistHistory: true,
				FlushInterval: 200 * time.Millisecond, Warn: func(err error) { ginkgo.Fail(err.Error()) }})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(st.Start(c)).To(gomega.Succeed())
			return st, stop
		}
		first, stop := start()
		base := time.Now().Add(-time.Hour)
		for i := range 20 {
			setStatus(tj, func(st *trainer.TrainJobStatus) {
				st.TrainerStatus = &trainer.TrainJobTrainerStatus{
					Metrics:         []trainer.Metric{{Name: "loss", Value: fmt.Sprintf("%.1f", 2.0-float64(i)*0.1)}},
					LastUpdatedTime: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}
			})
			gomega.Eventually(func() int { return first.History.Len(tj.UID) }).Should(gomega.Equal(i + 1))
		}
		cm := &corev1.ConfigMap{}
		gomega.Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "h-progress"}, cm)
		}).Should(gomega.Succeed())
		gomega.Expect(metav1.GetControllerOf(cm).UID).To(gomega.Equal(tj.UID))
		stop() // the UI stops; its last flush saves everything

		second, stop := start()
		defer stop()
		gomega.Eventually(func() int { return second.History.Len(tj.UID) }).Should(gomega.Equal(20))
		loss := second.History.Curves(tj.UID)[0]
		gomega.Expect(loss.Name).To(gomega.Equal("loss"))
		gomega.Expect(loss.Values[19]).To(gomega.Equal(0.1))
	})

	ginkgo.It("leaves alone a ConfigMap of that name that is not its own, and says so", func() {
		ns := util.NewNamespace(ctx, k8sClient, "history")
		gomega.Expect(k8sClient.Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "x-progress"},
			Data: map[string]string{"mine": "yes"}})).To(gomega.Succeed())
		tj := trainJob(ns, "x", "absent-runtime")
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		warnings := make(chan error, 10)
		c, stop := context.WithCancel(ctx)
		defer stop()
		st, err := ui.NewStore(fwk.Config, ui.StoreOptions{Namespaces: []string{ns}, PersistHistory: true,
			FlushInterval: 100 * time.Millisecond, Warn: func(err error) { warnings <- err }})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(st.Start(c)).To(gomega.Succeed())
		setStatus(tj, func(s *trainer.TrainJobStatus) {
			s.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](5), LastUpdatedTime: metav1.Now()}
		})
		var got error
		gomega.Eventually(warnings, "5s").Should(gomega.Receive(&got))
		gomega.Expect(got.Error()).To(gomega.ContainSubstring("ConfigMap " + ns + "/x-progress exists and is not the UI's progress history of this job: left alone"))
		cm := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "x-progress"}, cm)).To(gomega.Succeed())
		gomega.Expect(cm.Data).To(gomega.Equal(map[string]string{"mine": "yes"}))
		gomega.Expect(cm.BinaryData).To(gomega.BeEmpty())
	})
})

var _ = ginkgo.It("serves the Jobs page of a UI limited to one namespace (-n)", func() {
	ns := util.NewNamespace(ctx, k8sClient, "scoped")
	gomega.Expect(k8sClient.Create(ctx, trainJob(ns, "only", "absent-runtime"))).To(gomega.Succeed())
	c, stop := context.WithCancel(ctx)
	defer stop()
	st, err := ui.NewStore(fwk.Config, ui.StoreOptions{Namespaces: []string{ns}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(st.Start(c)).To(gomega.Succeed())
	srv, err := ui.NewServer(st, nil)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	code, body := request(ts, "/jobs?ns="+ns, nil)
	gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
	gomega.Expect(states(body)).To(gomega.Equal(map[string]string{ns + "/only": "Created"}))
	code, _ = request(ts, "/runtimes", nil)
	gomega.Expect(code).To(gomega.Equal(http.StatusOK))
})
