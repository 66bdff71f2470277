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
	"net/http"
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
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// caConfigMap is the CA ConfigMap of the TrainJob's namespace.
func caConfigMap(g gomega.Gomega, tj *trainer.TrainJob) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: trainjobstatus.CAConfigMapName}, cm)).To(gomega.Succeed())
	return cm
}

// setCA replaces the ca.crt of the webhook certificate Secret.
func setCA(pem []byte) {
	gomega.Eventually(func(g gomega.Gomega) {
		s := &corev1.Secret{}
		g.Expect(k8sClient.Get(ctx, caSecret, s)).To(gomega.Succeed())
		s.Data["ca.crt"] = pem
		g.Expect(k8sClient.Update(ctx, s)).To(gomega.Succeed())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
}

var _ = ginkgo.Describe("TrainJobStatus injection", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.It("gives every trainer container the server's env and the token and CA volume, and publishes the namespace's CA ConfigMap", func() {
		tj := newTrainJob(ns, "job")
		js := &jobsetv1alpha2.JobSet{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
		var node *corev1.PodSpec
		for i := range js.Spec.ReplicatedJobs {
			rj := &js.Spec.ReplicatedJobs[i]
			pod := &rj.Template.Spec.Template.Spec
			if rj.Name == "node" {
				node = pod
				continue
			}
			for _, c := range pod.Containers {
				gomega.Expect(c.Env).NotTo(gomega.ContainElement(gomega.HaveField("Name", trainjobstatus.EnvServerURL)), rj.Name)
			}
			gomega.Expect(pod.Volumes).NotTo(gomega.ContainElement(gomega.HaveField("Name", trainjobstatus.VolumeName)), rj.Name)
		}
		gomega.Expect(node).NotTo(gomega.BeNil())
		gomega.Expect(node.Containers[0].Env).To(gomega.ContainElements(
			corev1.EnvVar{Name: "KUBEFLOW_TRAINER_SERVER_URL", Value: statusURL(ns, "job")},
			corev1.EnvVar{Name: "KUBEFLOW_TRAINER_SERVER_CA_CERT", Value: "/var/run/secrets/kubeflow/trainer/ca.crt"},
			corev1.EnvVar{Name: "KUBEFLOW_TRAINER_SERVER_TOKEN", Value: "/var/run/secrets/kubeflow/trainer/token"},
		))
		gomega.Expect(node.Containers[0].VolumeMounts).To(gomega.ContainElement(corev1.VolumeMount{
			Name: "kubeflow-trainer-token", MountPath: "/var/run/secrets/kubeflow/trainer", ReadOnly: true}))
		gomega.Expect(node.Volumes).To(gomega.ContainElement(corev1.Volume{Name: "kubeflow-trainer-token",
			VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
				Sources: []corev1.VolumeProjection{
					{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
						Audience: "trainer.kubeflow.org/v1alpha1/namespaces/" + ns + "/trainjobs/job/status", ExpirationSeconds: ptr.To[int64](3600), Path: "token"}},
					{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "gantry-status-server-ca"},
						Items: []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}}, Optional: ptr.To(true)}},
				},
			}}}))

		cm := caConfigMap(gomega.Default, tj)
		gomega.Expect(cm.Data).To(gomega.Equal(map[string]string{"ca.crt": string(testCA.PEM)}))
		gomega.Expect(cm.Labels).To(gomega.Equal(map[string]string{trainjobstatus.CALabel: "true"}), "the publisher's cache selects on it")
		gomega.Expect(cm.OwnerReferences).To(gomega.BeEmpty(), "the namespace's, not the TrainJob's")
	})

	ginkgo.It("writes nothing on a reconcile with nothing to change, and progress reports do not reconcile", func() {
		tj := newTrainJob(ns, "job")
		token := tokenFor(tj)
		versions := func(g gomega.Gomega) []string {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			return []string{js.ResourceVersion, caConfigMap(g, tj).ResourceVersion}
		}
		var before []string
		gomega.Eventually(func(g gomega.Gomega) { before = versions(g) }, util.Timeout, util.Interval).Should(gomega.Succeed())
		applies := mgr.Applies()

		ginkgo.By("touching the TrainJob three times")
		fwk.TouchTrainJob(ctx, k8sClient, tj, 3)
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(versions(g)).To(gomega.Equal(before))
			g.Expect(mgr.Applies()).To(gomega.Equal(applies), "a reconcile with nothing to change sent an apply")
		}, "2s", util.Interval).Should(gomega.Succeed())

		ginkgo.By("reporting progress three times")
		reconciles := fwk.TrainJobReconciles()
		for i := range 3 {
			code, body := post(gomega.Default, statusURL(ns, "job"), token, report(int32(i), 1, time.Now()))
			gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
		}
		gomega.Consistently(fwk.TrainJobReconciles, "2s", util.Interval).Should(gomega.Equal(reconciles))
		gomega.Expect(mgr.Applies()).To(gomega.Equal(applies))
	})
})

var _ = ginkgo.Describe("The status server CA", ginkgo.Ordered, ginkgo.Serial, func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.It("reaches the CA ConfigMaps of the namespaces with unfinished TrainJobs when it changes", func() {
		tj := newTrainJob(ns, "job")
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(caConfigMap(g, tj).Data["ca.crt"]).To(gomega.Equal(string(testCA.PEM)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		rotated, err := utiltesting.NewTestCA()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		setCA(rotated.PEM)
		ginkgo.DeferCleanup(setCA, testCA.PEM)
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(caConfigMap(g, tj).Data["ca.crt"]).To(gomega.Equal(string(rotated.PEM)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	// Issue 13, defect 7: a missing CA no longer fails the build (this spec asserted that it did).
	ginkgo.It("builds without progress reporting when the Secret is missing, says so in status, and injects once it is back", func() {
		secret := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, caSecret, secret)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Delete(ctx, secret)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() {
			restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: caSecret.Namespace, Name: caSecret.Name}, Data: secret.Data}
			gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, restored))).To(gomega.Succeed())
		})
		const msg = "the webhook certificate Secret kubeflow-system/kubeflow-trainer-webhook-cert does not exist"
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns, "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})).To(gomega.Succeed())
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			g.Expect(cur.Status.BuildError).To(gomega.BeNil())
			g.Expect(cur.Status.DisabledFeatures).To(gomega.ConsistOf(gomega.And(
				gomega.HaveField("Name", trainjobstatus.FeatureProgressReporting),
				gomega.HaveField("Message", gomega.ContainSubstring(msg)))))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("creating the Secret again")
		restored := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: caSecret.Namespace, Name: caSecret.Name}, Data: secret.Data}
		gomega.Expect(k8sClient.Create(ctx, restored)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(caConfigMap(g, tj).Data["ca.crt"]).To(gomega.Equal(string(testCA.PEM)))
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			g.Expect(cur.Status.DisabledFeatures).To(gomega.BeEmpty())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})
