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

package controller

import (
	"fmt"
	"maps"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// An optional feature never stops the core job (issue 13, defect 7): with progress reporting on
// and no status server CA (certManagement off, no certificate Secret), TrainJobs still run.
var _ = ginkgo.Describe("Progress reporting without a status server CA", ginkgo.Ordered, func() {
	var restore func()
	var caNamespace string
	const caName = "status-ca"

	ginkgo.BeforeAll(func() {
		caNamespace = newNamespace()
		restore = withManager(func(m manager.Manager) error {
			bundle, err := cert.NewCABundle(m.GetConfig(), m.GetScheme(), m.GetRESTMapper(), types.NamespacedName{Namespace: caNamespace, Name: caName})
			if err != nil {
				return err
			}
			if err := m.Add(bundle.Cache()); err != nil {
				return err
			}
			rt, err := plugins.NewRuntime(framework.Options{StatusServerURL: func(ns, name string) string {
				return "https://status.test/" + ns + "/" + name
			}})
			if err != nil {
				return err
			}
			return controller.SetupControllers(m, rt, controller.WithStatusServerCA(bundle))
		})
	})
	ginkgo.AfterAll(func() { restore() })

	ginkgo.It("builds without the progress injection, says why once, and injects it when the CA appears before the job starts", func() {
		ns := newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		job := func(name string) *utiltesting.TrainJobWrapper {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(1).Obj())
		}
		waiting, running := job("waiting").Suspend(true).Obj(), job("running").Obj()
		for _, tj := range []*trainer.TrainJob{waiting, running} {
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		}
		nodeEnv := func(g gomega.Gomega, tj *trainer.TrainJob) []string {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			var names []string
			for _, e := range nodeJob(js).Template.Spec.Template.Spec.Containers[0].Env {
				names = append(names, e.Name)
			}
			return names
		}
		for _, tj := range []*trainer.TrainJob{waiting, running} {
			gomega.Eventually(func(g gomega.Gomega) {
				g.Expect(nodeEnv(g, tj)).To(gomega.ContainElement("PET_NNODES"), "the TrainJob was not built")
				g.Expect(nodeEnv(g, tj)).NotTo(gomega.ContainElement("KUBEFLOW_TRAINER_SERVER_URL"))
				got := &trainer.TrainJob{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
				g.Expect(got.Status.BuildError).To(gomega.BeNil(), "a missing optional feature failed the build")
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
		}
		fwk.TouchTrainJob(ctx, k8sClient, waiting, 2)
		gomega.Eventually(func(g gomega.Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
			var told []corev1.Event
			for _, e := range events.Items {
				if e.InvolvedObject.Name == "waiting" && e.Reason == "ProgressReportingDisabled" {
					told = append(told, e)
				}
			}
			g.Expect(told).To(gomega.HaveLen(1))
			g.Expect(told[0].Count).To(gomega.BeNumerically("<=", 1), "told more than once")
			g.Expect(told[0].Message).To(gomega.ContainSubstring(caNamespace + "/" + caName))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("creating the CA: the waiting job gets the injection, the running one is left alone")
		gomega.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: caNamespace, Name: caName},
			Data: map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}})).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(nodeEnv(g, waiting)).To(gomega.ContainElement("KUBEFLOW_TRAINER_SERVER_URL"))
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: trainjobstatus.CAConfigMapName}, &corev1.ConfigMap{})).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(nodeEnv(g, running)).NotTo(gomega.ContainElement("KUBEFLOW_TRAINER_SERVER_URL"), "a running JobSet was changed")
		}, "2s", util.Interval).Should(gomega.Succeed())
	})

	// Issue 21: one CA ConfigMap per namespace instead of one per TrainJob (a write fewer per
	// TrainJob), kept what Gantry published.
	ginkgo.It("publishes one CA ConfigMap per namespace, and publishes it again when it is deleted, changed or the CA rotates", func() {
		ns := newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		for i := range 5 {
			tj := utiltesting.MakeTrainJobWrapper(ns, fmt.Sprintf("job-%d", i)).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(1).Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		}
		ensureCASecret(caNamespace, caName)
		caKey := client.ObjectKey{Namespace: ns, Name: trainjobstatus.CAConfigMapName}
		secret := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: caNamespace, Name: caName}, secret)).To(gomega.Succeed())
		published := func(g gomega.Gomega, want string) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, caKey, cm)).To(gomega.Succeed())
			g.Expect(cm.Data).To(gomega.Equal(map[string]string{"ca.crt": want}))
			g.Expect(cm.Labels).To(gomega.HaveKeyWithValue(trainjobstatus.CALabel, "true"))
			g.Expect(cm.OwnerReferences).To(gomega.BeEmpty(), "a namespace's CA must outlive each TrainJob")
		}
		gomega.Eventually(func(g gomega.Gomega) {
			for i := range 5 {
				js := &jobsetv1alpha2.JobSet{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("job-%d", i)}, js)).To(gomega.Succeed())
				g.Expect(caSource(nodeJob(js))).To(gomega.Equal(trainjobstatus.CAConfigMapName))
			}
			published(g, string(secret.Data["ca.crt"]))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("building more TrainJobs there: no write to the CA ConfigMap")
		before := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, caKey, before)).To(gomega.Succeed())
		for i := 5; i < 8; i++ {
			tj := utiltesting.MakeTrainJobWrapper(ns, fmt.Sprintf("job-%d", i)).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(1).Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			gomega.Eventually(func() error {
				return k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
		}
		gomega.Consistently(func(g gomega.Gomega) {
			got := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, caKey, got)).To(gomega.Succeed())
			g.Expect(got.ResourceVersion).To(gomega.Equal(before.ResourceVersion))
		}, "1s", util.Interval).Should(gomega.Succeed())

		ginkgo.By("deleting it: published again")
		cm := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, caKey, cm)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Delete(ctx, cm)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			got := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, caKey, got)).To(gomega.Succeed())
			g.Expect(got.UID).NotTo(gomega.Equal(cm.UID))
			published(g, string(secret.Data["ca.crt"]))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("changing its CA: restored")
		gomega.Eventually(func(g gomega.Gomega) {
			got := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, caKey, got)).To(gomega.Succeed())
			got.Data["ca.crt"] = "someone else's CA"
			g.Expect(k8sClient.Update(ctx, got)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) { published(g, string(secret.Data["ca.crt"])) }, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("rotating the CA: the namespace gets the new one")
		rotated := "-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n"
		original := maps.Clone(secret.Data)
		secret.Data["ca.crt"] = []byte(rotated)
		gomega.Expect(k8sClient.Update(ctx, secret)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() {
			gomega.Eventually(func(g gomega.Gomega) {
				cur := &corev1.Secret{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(secret), cur)).To(gomega.Succeed())
				cur.Data = original
				g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
		})
		gomega.Eventually(func(g gomega.Gomega) { published(g, rotated) }, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	// The name is reserved, as kube-root-ca.crt is: a ConfigMap of that name someone else made,
	// even an immutable one, ends up holding the CA, so no one can make the pods trust another.
	ginkgo.It("takes over a ConfigMap of the reserved name that someone else created, even an immutable one", func() {
		ensureCASecret(caNamespace, caName)
		secret := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: caNamespace, Name: caName}, secret)).To(gomega.Succeed())
		for _, immutable := range []bool{false, true} {
			ns := newNamespace()
			squatter := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: trainjobstatus.CAConfigMapName},
				Data: map[string]string{"ca.crt": "a CA chosen by someone else", "other": "key"}, Immutable: ptr.To(immutable)}
			gomega.Expect(k8sClient.Create(ctx, squatter)).To(gomega.Succeed())
			rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
				utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
			tj := utiltesting.MakeTrainJobWrapper(ns, "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(1).Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			gomega.Eventually(func(g gomega.Gomega) {
				js := &jobsetv1alpha2.JobSet{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
				g.Expect(caSource(nodeJob(js))).To(gomega.Equal(trainjobstatus.CAConfigMapName))
				got := &corev1.ConfigMap{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(squatter), got)).To(gomega.Succeed())
				g.Expect(got.Data).To(gomega.Equal(map[string]string{"ca.crt": string(secret.Data["ca.crt"])}))
				g.Expect(got.Labels).To(gomega.HaveKeyWithValue(trainjobstatus.CALabel, "true"))
			}, util.Timeout, util.Interval).Should(gomega.Succeed(), "immutable %v", immutable)
		}
	})
})

// ensureCASecret creates the status server CA Secret namespace/name unless it exists.
func ensureCASecret(namespace, name string) {
	gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Data: map[string][]byte{"ca.crt": []byte("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n")}}))).To(gomega.Succeed())
}

// caSource is the ConfigMap the status volume of a Job's pods reads the CA from; empty without it.
func caSource(job *jobsetv1alpha2.ReplicatedJob) string {
	for _, v := range job.Template.Spec.Template.Spec.Volumes {
		if v.Name != trainjobstatus.VolumeName || v.Projected == nil {
			continue
		}
		for _, src := range v.Projected.Sources {
			if src.ConfigMap != nil {
				return src.ConfigMap.Name
			}
		}
	}
	return ""
}
