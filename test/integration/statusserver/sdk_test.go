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

package statusserver

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/test/util"
)

// podView is what the trainer pod of a TrainJob would see: its env, and the files the kubelet
// would project (the token for the volume's audience, the CA from the ConfigMap), written to dir.
func podView(tj *trainer.TrainJob, dir string) []string {
	js := &jobsetv1alpha2.JobSet{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
	var pod *corev1.PodSpec
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == "node" {
			pod = &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		}
	}
	gomega.Expect(pod).NotTo(gomega.BeNil())
	var audience, configMap string
	for _, v := range pod.Volumes {
		if v.Name != trainjobstatus.VolumeName {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ServiceAccountToken != nil {
				audience = src.ServiceAccountToken.Audience
			}
			if src.ConfigMap != nil {
				configMap = src.ConfigMap.Name
			}
		}
	}
	token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, audience)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	cm := &corev1.ConfigMap{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: configMap}, cm)).To(gomega.Succeed())
	tokenFile, caFile := filepath.Join(dir, "token"), filepath.Join(dir, "ca.crt")
	gomega.Expect(os.WriteFile(tokenFile, []byte(token), 0o600)).To(gomega.Succeed())
	gomega.Expect(os.WriteFile(caFile, []byte(cm.Data["ca.crt"]), 0o600)).To(gomega.Succeed())
	var environ []string
	for _, e := range pod.Containers[0].Env {
		switch e.Name {
		case trainjobstatus.EnvServerURL:
			environ = append(environ, e.Name+"="+e.Value)
		case trainjobstatus.EnvCACert:
			gomega.Expect(e.Value).To(gomega.Equal(filepath.Join(trainjobstatus.MountPath, "ca.crt")))
			environ = append(environ, e.Name+"="+caFile)
		case trainjobstatus.EnvToken:
			gomega.Expect(e.Value).To(gomega.Equal(filepath.Join(trainjobstatus.MountPath, "token")))
			environ = append(environ, e.Name+"="+tokenFile)
		}
	}
	gomega.Expect(environ).To(gomega.HaveLen(3))
	return environ
}

var _ = ginkgo.Describe("A training pod using the SDK's protocol", func() {
	ginkgo.It("reports progress with the injected URL, token and CA, and kubectl get shows it", func() {
		python, err := exec.LookPath("python3")
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "the SDK client test needs python3 (standard library only)")
		ns := newNamespace()
		tj := newTrainJob(ns, "sdk")
		environ := podView(tj, ginkgo.GinkgoT().TempDir())
		cmd := exec.Command(python, filepath.Join(util.RepoRoot(), "test", "statusclient", "update_status.py"),
			"--progress", "42", "--eta", "120", "--metric", "loss=0.123", "--metric", "accuracy=0.95")
		cmd.Env = append(os.Environ(), environ...)
		out, err := cmd.CombinedOutput()
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
		gomega.Expect(string(out)).To(gomega.HavePrefix("200 "))

		st := trainerStatus(gomega.Default, tj)
		gomega.Expect(st.ProgressPercentage).To(gomega.Equal(ptr.To[int32](42)))
		gomega.Expect(st.EstimatedRemainingSeconds).To(gomega.Equal(ptr.To[int32](120)))
		gomega.Expect(st.Metrics).To(gomega.Equal([]trainer.Metric{{Name: "loss", Value: "0.123"}, {Name: "accuracy", Value: "0.95"}}))
		gomega.Expect(st.LastUpdatedTime.Time).To(gomega.BeTemporally("~", time.Now(), time.Minute))
		table, err := env.Kubectl("get", "trainjobs", "-n", ns)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(table).To(gomega.MatchRegexp(`NAME\s+STATE\s+SUSPENDED\s+RUNTIME\s+NODES\s+ACTIVE\s+READY\s+FAILED\s+PROGRESS\s+ETA\s+AGE`))
		gomega.Expect(table).To(gomega.MatchRegexp(`(?m)^sdk\s+false\s+torch\s+42\s+120\s+\d+s$`))

		ginkgo.By("a token file of another TrainJob")
		other := newTrainJob(ns, "other")
		otherEnv := podView(other, ginkgo.GinkgoT().TempDir())
		cmd = exec.Command(python, filepath.Join(util.RepoRoot(), "test", "statusclient", "update_status.py"), "--progress", "99")
		cmd.Env = append(os.Environ(), environ[0], environ[1], otherEnv[2])
		out, err = cmd.CombinedOutput()
		gomega.Expect(err).To(gomega.HaveOccurred())
		gomega.Expect(string(out)).To(gomega.HavePrefix("403 "))
		gomega.Expect(trainerStatus(gomega.Default, tj).ProgressPercentage).To(gomega.Equal(ptr.To[int32](42)))
	})

	ginkgo.It("makes a report visible in the TrainJob within a second", func() {
		ns := newNamespace()
		tj := newTrainJob(ns, "latency")
		token := tokenFor(tj)
		w, err := client.NewWithWatch(env.Config, client.Options{Scheme: env.Scheme})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		watcher, err := w.Watch(wctx, &trainer.TrainJobList{}, client.InNamespace(ns))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		defer watcher.Stop()
		const reports = 20
		latencies := make([]time.Duration, 0, reports)
		for i := 1; i <= reports; i++ {
			start := time.Now()
			code, body := post(gomega.Default, statusURL(ns, "latency"), token, report(int32(i), 1, start))
			gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
			seen := false
			for !seen {
				select {
				case ev := <-watcher.ResultChan():
					gomega.Expect(ev.Type).NotTo(gomega.Equal(watch.Error))
					cur, ok := ev.Object.(*trainer.TrainJob)
					seen = ok && cur.Status.TrainerStatus != nil && ptr.Deref(cur.Status.TrainerStatus.ProgressPercentage, 0) == int32(i)
				case <-time.After(util.Timeout):
					ginkgo.Fail(fmt.Sprintf("report %d not seen by a watch within %s", i, util.Timeout))
				}
			}
			latencies = append(latencies, time.Since(start))
		}
		// A TrainJob may report a burst of 10, then one a second (the server's per-TrainJob limit):
		// reports sent back to back beyond the burst wait for it. A pod reports at most every 5
		// seconds, so the first ten are what one pod sees.
		burst, throttled := slices.Clone(latencies[:10]), slices.Clone(latencies[10:])
		slices.Sort(burst)
		slices.Sort(throttled)
		slices.Sort(latencies)
		summary := fmt.Sprintf("POST to watch event, %d reports back to back: within the burst median %s, max %s; "+
			"beyond it (1 report/s) median %s, max %s; overall max %s", reports,
			burst[len(burst)/2], burst[len(burst)-1], throttled[len(throttled)/2], throttled[len(throttled)-1], latencies[reports-1])
		ginkgo.AddReportEntry("status latency", summary)
		_, _ = fmt.Fprintln(ginkgo.GinkgoWriter, summary)
		gomega.Expect(burst[len(burst)/2]).To(gomega.BeNumerically("<", time.Second), summary)
	})
})
