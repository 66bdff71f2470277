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

package manager

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// trainJobWithJobSet creates a torch runtime and a TrainJob in a new namespace and returns the
// TrainJob and the trainer pod template of its JobSet.
func trainJobWithJobSet(p *process) (*trainer.TrainJob, *corev1.PodSpec) {
	ns := util.NewNamespace(ctx, k8sClient, "mgr")
	rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
		utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	tj := utiltesting.MakeTrainJobWrapper(ns, "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
	gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
	js := &jobsetv1alpha2.JobSet{}
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
	}, "30s", util.Interval).Should(gomega.Succeed(), func() string { return p.logs() })
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == "node" {
			return tj, &js.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		}
	}
	ginkgo.Fail("the JobSet has no node job")
	return nil, nil
}

func envValue(pod *corev1.PodSpec, name string) string {
	for _, e := range pod.Containers[0].Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

var _ = ginkgo.Describe("The manager binary's status server", ginkgo.Ordered, func() {
	ginkgo.It("is on by default: probes, injection, the CA ConfigMap, and a report from a pod's point of view", func() {
		p := startManager("progress", "gantry-progress")
		gomega.Eventually(p.ready, "60s", util.Interval).Should(gomega.Succeed(), func() string { return p.logs() })
		for path, check := range map[string]string{"/readyz": "[+]status-server-readyz ok", "/healthz": "[+]status-server-healthz ok"} {
			out, err := p.probe(path)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(out).To(gomega.ContainSubstring(check))
		}
		gomega.Eventually(p.logs, "30s", util.Interval).Should(gomega.ContainSubstring("Successfully acquired lease"))

		tj, pod := trainJobWithJobSet(p)
		_, port, err := net.SplitHostPort(p.status)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		wantURL := "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:" + port + trainjobstatus.Path(tj.Namespace, tj.Name)
		gomega.Expect(envValue(pod, trainjobstatus.EnvServerURL)).To(gomega.Equal(wantURL))
		secret := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "kubeflow-system", Name: "kubeflow-trainer-webhook-cert"}, secret)).To(gomega.Succeed())
		cm := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: trainjobstatus.CAConfigMapName}, cm)).To(gomega.Succeed())
		gomega.Expect(cm.Data["ca.crt"]).To(gomega.Equal(string(secret.Data["ca.crt"])))

		ginkgo.By("posting as the pod would: the CA from the ConfigMap, the Service name in TLS, a projected token")
		u, err := url.Parse(wantURL)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		roots := x509.NewCertPool()
		gomega.Expect(roots.AppendCertsFromPEM([]byte(cm.Data["ca.crt"]))).To(gomega.BeTrue())
		dialer := &net.Dialer{}
		httpClient := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
			// The Service name does not resolve here; the manager listens on loopback.
			DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
				return dialer.DialContext(ctx, network, p.status)
			},
			TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12},
		}}
		token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, trainjobstatus.Audience(tj.Namespace, tj.Name))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		at := time.Now().UTC().Truncate(time.Second)
		body := fmt.Sprintf(`{"trainerStatus":{"progressPercentage":7,"estimatedRemainingSeconds":3600,"lastUpdatedTime":%q}}`, at.Format(time.RFC3339))
		gomega.Eventually(func(g gomega.Gomega) {
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, wantURL, strings.NewReader(body))
			g.Expect(err).NotTo(gomega.HaveOccurred())
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := httpClient.Do(req)
			g.Expect(err).NotTo(gomega.HaveOccurred())
			defer func() { _ = resp.Body.Close() }()
			data, _ := io.ReadAll(resp.Body)
			g.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK), string(data))
		}, util.Timeout, util.Interval).Should(gomega.Succeed(), func() string { return p.logs() })
		cur := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
		gomega.Expect(cur.Status.TrainerStatus).NotTo(gomega.BeNil())
		gomega.Expect(cur.Status.TrainerStatus.ProgressPercentage).To(gomega.Equal(ptr.To[int32](7)))
		gomega.Expect(cur.Status.TrainerStatus.LastUpdatedTime.Equal(ptr.To(metav1.NewTime(at)))).To(gomega.BeTrue())
	})

	ginkgo.It("is absent with --feature-gates=TrainJobStatus=false: no server, no probes, nothing injected", func() {
		p := startManager("off", "gantry-off", "--feature-gates=TrainJobStatus=false")
		gomega.Eventually(p.ready, "60s", util.Interval).Should(gomega.Succeed(), func() string { return p.logs() })
		for _, path := range []string{"/readyz", "/healthz"} {
			out, err := p.probe(path)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(out).NotTo(gomega.ContainSubstring("status-server"))
		}
		tj, pod := trainJobWithJobSet(p)
		for _, c := range pod.Containers {
			for _, e := range c.Env {
				gomega.Expect(e.Name).NotTo(gomega.HavePrefix("KUBEFLOW_TRAINER_SERVER_"))
			}
			gomega.Expect(c.VolumeMounts).NotTo(gomega.ContainElement(gomega.HaveField("Name", trainjobstatus.VolumeName)))
		}
		gomega.Expect(pod.Volumes).NotTo(gomega.ContainElement(gomega.HaveField("Name", trainjobstatus.VolumeName)))
		gomega.Consistently(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: trainjobstatus.CAConfigMapName}, &corev1.ConfigMap{})
			g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
			g.Expect(err).To(gomega.HaveOccurred(), "no CA ConfigMap")
			conn, err := net.DialTimeout("tcp", p.status, time.Second)
			if err == nil {
				_ = conn.Close()
			}
			g.Expect(err).To(gomega.HaveOccurred(), "nothing listens on the status server port")
		}, "2s", util.Interval).Should(gomega.Succeed())
	})
})
