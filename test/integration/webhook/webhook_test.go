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

package webhook

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// beForbidden matches a webhook rejection: 403 with message in the error text.
func beForbidden(message string) gomega.OmegaMatcher {
	return gomega.SatisfyAll(
		gomega.WithTransform(apierrors.IsForbidden, gomega.BeTrue()),
		gomega.WithTransform(func(err error) string { return err.Error() }, gomega.ContainSubstring(message)),
	)
}

var _ = ginkgo.Describe("TrainJob webhooks", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	job := func(name string) *utiltesting.TrainJobWrapper {
		return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch")
	}
	patch := func(manager, pool string) trainer.RuntimePatch {
		return utiltesting.MakeRuntimePatchWrapper(manager).PodSpec("node", trainer.PodSpecPatch{NodeSelector: map[string]string{"pool": pool}}).Obj()
	}

	ginkgo.It("accepts a valid TrainJob and stamps its runtime patches", func() {
		tj := job("ok").RuntimePatches(patch(trainer.RuntimePatchManagerSDK, "a")).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(tj.Spec.RuntimePatches[0].Time).NotTo(gomega.BeNil())
	})

	ginkgo.It("is asked to default only the TrainJobs that have runtime patches (matchConditions)", func() {
		before := defaulterCalls()
		gomega.Expect(k8sClient.Create(ctx, job("plain").Obj())).To(gomega.Succeed())
		gomega.Expect(defaulterCalls()).To(gomega.Equal(before), "the apiserver called the defaulter for a TrainJob without patches")
		tj := job("patched").RuntimePatches(patch(trainer.RuntimePatchManagerSDK, "a")).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(defaulterCalls()).To(gomega.Equal(before + 1))
		gomega.Expect(tj.Spec.RuntimePatches[0].Time).NotTo(gomega.BeNil())
	})

	ginkgo.DescribeTable("refuses invalid TrainJobs with 403",
		func(tj func(*utiltesting.TrainJobWrapper) *trainer.TrainJob, message string) {
			gomega.Expect(k8sClient.Create(ctx, tj(job("bad")))).To(beForbidden(message))
		},
		ginkgo.Entry("a missing runtime", func(w *utiltesting.TrainJobWrapper) *trainer.TrainJob {
			return w.RuntimeRef(trainer.TrainingRuntimeKind, "missing").Obj()
		}, "spec.runtimeRef: Not found: \"missing: specified trainingRuntime must be created before the TrainJob is created\""),
		ginkgo.Entry("an unsupported runtime kind", func(w *utiltesting.TrainJobWrapper) *trainer.TrainJob {
			tj := w.Obj()
			tj.Spec.RuntimeRef.APIGroup, tj.Spec.RuntimeRef.Kind = ptr.To("example.com"), ptr.To("Blueprint")
			return tj
		}, "unsupported runtime: Blueprint.example.com"),
		ginkgo.Entry("reserved torch env", func(w *utiltesting.TrainJobWrapper) *trainer.TrainJob {
			return w.Trainer(utiltesting.MakeTrainerWrapper().Env(corev1.EnvVar{Name: "PET_NNODES", Value: "1"}).Obj()).Obj()
		}, `spec.trainer.env: Invalid value: [{"name":"PET_NNODES","value":"1"}]: must not have reserved envs`),
		ginkgo.Entry("a patch of an unknown job", func(w *utiltesting.TrainJobWrapper) *trainer.TrainJob {
			return w.RuntimePatches(utiltesting.MakeRuntimePatchWrapper("example.com/x").PodSpec("workers", trainer.PodSpecPatch{}).Obj()).Obj()
		}, "must not have replicated job that doesn't exist in the runtime job template"),
	)

	ginkgo.It("tells schema rejections (422) from webhook rejections (403)", func() {
		err := k8sClient.Create(ctx, job("schema").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(-1).Obj()).Obj())
		gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "got %v", err)
	})

	ginkgo.It("accepts a Kueue admission: patch and resume in one update; only the changed patch gets a new time", func() {
		tj := job("kueue").Suspend(true).RuntimePatches(patch(trainer.RuntimePatchManagerSDK, "sdk"), patch(trainer.RuntimePatchManagerKueue, "a")).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		sdkTime, kueueTime := *tj.Spec.RuntimePatches[0].Time, *tj.Spec.RuntimePatches[1].Time
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			cur.Spec.Suspend = ptr.To(false)
			cur.Spec.RuntimePatches[1] = patch(trainer.RuntimePatchManagerKueue, "b")
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
			g.Expect(cur.Spec.RuntimePatches[0].Time.Equal(&sdkTime)).To(gomega.BeTrue(), "the unchanged patch got a new time")
			g.Expect(cur.Spec.RuntimePatches[1].Time).NotTo(gomega.BeNil())
			g.Expect(cur.Spec.RuntimePatches[1].Time.Before(&kueueTime)).To(gomega.BeFalse())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("refuses a patch change while the TrainJob runs", func() {
		tj := job("running").RuntimePatches(patch(trainer.RuntimePatchManagerKueue, "a")).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Spec.RuntimePatches[0] = patch(trainer.RuntimePatchManagerKueue, "b")
		gomega.Expect(k8sClient.Update(ctx, tj)).To(beForbidden(
			"RuntimePatches can only be modified when the TrainJob is suspended before or after the update"))
	})

	ginkgo.It("refuses a patch change while a replicated job is still active", func() {
		tj := job("active").Suspend(true).RuntimePatches(patch(trainer.RuntimePatchManagerKueue, "a")).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		js := &jobsetv1alpha2.JobSet{}
		js.Name, js.Namespace = tj.Name, ns
		js.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{{Name: "node", Replicas: 1,
			Template: utiltesting.Job(utiltesting.MakeTrainingRuntimeSpecWrapper().Obj().Template.Spec.ReplicatedJobs, utiltesting.Node).Template}}
		gomega.Expect(k8sClient.Create(ctx, js)).To(gomega.Succeed())
		js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}
		gomega.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
		tj.Spec.RuntimePatches[0] = patch(trainer.RuntimePatchManagerKueue, "b")
		gomega.Expect(k8sClient.Update(ctx, tj)).To(beForbidden(
			"RuntimePatches cannot be modified when the JobSet's ReplicatedJob node is still active"))
	})

	ginkgo.It("warns about a deprecated ClusterTrainingRuntime", func() {
		ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("old-"+ns).Label(trainer.SupportLabel, trainer.SupportDeprecated).Obj()
		gomega.Expect(k8sClient.Create(ctx, ctr)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, ctr)).To(gomega.Succeed()) })
		warnings := &warningCollector{}
		cfg := *env.Config
		cfg.WarningHandlerWithContext = warnings
		wc, err := client.New(&cfg, client.Options{Scheme: env.Scheme})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		tj := utiltesting.MakeTrainJobWrapper(ns, "old").RuntimeRef(trainer.ClusterTrainingRuntimeKind, ctr.Name).Obj()
		gomega.Expect(wc.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(warnings.messages).To(gomega.ContainElement(gomega.ContainSubstring(
			"Referenced ClusterTrainingRuntime \"" + ctr.Name + "\" is deprecated")))
	})
})

var _ = ginkgo.Describe("Runtime webhooks", func() {
	invalid := func() trainer.TrainingRuntimeSpec {
		spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
		utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Replicas = 2
		return spec
	}

	ginkgo.It("validate TrainingRuntimes on create, and their updates, as Kubeflow Trainer does, only for what can never build", func() {
		ns := newNamespace()
		gomega.Expect(k8sClient.Create(ctx, utiltesting.MakeTrainingRuntimeWrapper(ns, "bad").Spec(invalid()).Obj())).
			To(beForbidden("spec.template.spec.replicatedJobs[2].replicas: Invalid value: 2: always must be 1"))
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "good").Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		rt.Spec = invalid()
		gomega.Expect(k8sClient.Update(ctx, rt)).To(gomega.Succeed())
		utiltesting.Job(rt.Spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Labels = nil
		utiltesting.Job(rt.Spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = -1
		gomega.Expect(k8sClient.Update(ctx, rt)).To(beForbidden("spec.template.spec.replicatedJobs[0].replicas: Invalid value: -1: must be greater than or equal to 0"))
	})

	ginkgo.It("validate ClusterTrainingRuntime updates as Kubeflow Trainer does", func() {
		ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("updated-" + newNamespace()).Obj()
		gomega.Expect(k8sClient.Create(ctx, ctr)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, ctr)).To(gomega.Succeed()) })
		ctr.Spec = invalid()
		gomega.Expect(k8sClient.Update(ctx, ctr)).To(beForbidden("always must be 1"))
	})

	ginkgo.It("validate ClusterTrainingRuntimes, unless labelled webhook-validation=disabled", func() {
		gomega.Expect(k8sClient.Create(ctx, utiltesting.MakeClusterTrainingRuntimeWrapper("bad-cluster").Spec(invalid()).Obj())).
			To(beForbidden("always must be 1"))
		skipped := utiltesting.MakeClusterTrainingRuntimeWrapper("skipped").Spec(invalid()).
			Label(trainer.WebhookValidationLabel, trainer.WebhookValidationDisabled).Obj()
		gomega.Expect(k8sClient.Create(ctx, skipped)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Delete(ctx, skipped)).To(gomega.Succeed())
	})
})

// defaulterCalls is how many requests the manager's TrainJob defaulter has served, from
// controller-runtime's webhook metrics in this process.
func defaulterCalls() float64 {
	return fwk.CounterSum("controller_runtime_webhook_requests_total", "webhook", "/mutate-trainer-kubeflow-org-v1alpha1-trainjob")
}
