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

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("TrainJob controller", func() {
	var ns string
	var rt *trainer.TrainingRuntime

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt = utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})

	torchJob := func(name string) *utiltesting.TrainJobWrapper {
		return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
			Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", []string{"torchrun"}, nil).NumNodes(3).Obj())
	}
	jobSetOf := func(g gomega.Gomega, tj *trainer.TrainJob) *jobsetv1alpha2.JobSet {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
		return js
	}
	get := func(g gomega.Gomega, tj *trainer.TrainJob) *trainer.TrainJob {
		got := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
		return got
	}

	ginkgo.It("creates the JobSet and the runtime snapshot, owned by the TrainJob", func() {
		observed := histogramCount(metrics.JobSetCreationSeconds)
		tj := torchJob("alpha").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := jobSetOf(g, tj)
			g.Expect(metav1.IsControlledBy(js, get(g, tj))).To(gomega.BeTrue())
			g.Expect(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Parallelism).To(gomega.Equal(ptr.To[int32](3)))
			node := utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0]
			g.Expect(node.Image).To(gomega.Equal("pytorch:2"))
			g.Expect(node.Env).To(gomega.ContainElement(corev1.EnvVar{Name: "PET_MASTER_ADDR", Value: "alpha-node-0-0.alpha"}))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "alpha-runtime-snapshot"}, cm)).To(gomega.Succeed())
			g.Expect(cm.Labels).To(gomega.HaveKeyWithValue(core.TrainJobNameLabel, "alpha"))
			g.Expect(cm.Data).To(gomega.HaveKey("runtime"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(histogramCount(metrics.JobSetCreationSeconds)).To(gomega.BeNumerically(">", observed))
	})

	ginkgo.It("mirrors the JobSet status, with all six counters, and Complete", func() {
		tj := torchJob("mirror").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := jobSetOf(g, tj)
			js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}
			g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(get(g, tj).Status.JobsStatus).To(gomega.Equal([]trainer.JobStatus{{
				Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](0), Succeeded: ptr.To[int32](0),
				Failed: ptr.To[int32](0), Suspended: ptr.To[int32](0),
			}}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		completeJobSet(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobComplete)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(gomega.Equal("AllJobsCompleted"))
			g.Expect(c.Message).To(gomega.Equal("jobset completed successfully"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("never rebuilds a finished TrainJob, even when its JobSet is deleted", func() {
		tj := torchJob("finished").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		completeJobSet(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(apimeta.IsStatusConditionTrue(get(g, tj).Status.Conditions, trainer.TrainJobComplete)).To(gomega.BeTrue())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "finished"}}
		gomega.Expect(k8sClient.Delete(ctx, js)).To(gomega.Succeed())
		// The outcome finalizer goes once the TrainJob's terminal state is recorded, so the
		// JobSet disappears; a reconcile after that proves the negative below is not vacuous.
		gomega.Eventually(func() bool {
			return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &jobsetv1alpha2.JobSet{}))
		}, util.Timeout, util.Interval).Should(gomega.BeTrue())
		fwk.TouchTrainJob(ctx, k8sClient, tj, 1)
		gomega.Consistently(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &jobsetv1alpha2.JobSet{})
			g.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
			g.Expect(err).To(gomega.HaveOccurred(), "the JobSet was recreated")
			g.Expect(apimeta.IsStatusConditionTrue(get(g, tj).Status.Conditions, trainer.TrainJobComplete)).To(gomega.BeTrue())
		}, "3s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("fails a TrainJob whose runtime kind is not a runtime", func() {
		tj := utiltesting.MakeTrainJobWrapper(ns, "unknown").Obj()
		tj.Spec.RuntimeRef = trainer.RuntimeRef{Name: "x", APIGroup: ptr.To("example.com"), Kind: ptr.To("Blueprint")}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobFailed)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Reason).To(gomega.Equal(trainer.TrainJobRuntimeNotSupportedReason))
			g.Expect(c.Message).To(gomega.Equal("unsupported runtime: Blueprint.example.com"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("leaves TrainJobs managed by MultiKueue alone", func() {
		tj := torchJob("remote").ManagedBy(trainer.ManagedByMultiKueue).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		fwk.TouchTrainJob(ctx, k8sClient, tj, 1)
		gomega.Consistently(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(err).To(gomega.HaveOccurred())
			g.Expect(get(g, tj).Status.Conditions).To(gomega.BeEmpty())
		}, "2s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("suspends, resumes, and renders the JobSet while suspended", func() {
		tj := torchJob("pause").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(jobSetOf(g, tj).Spec.Suspend).To(gomega.Equal(ptr.To(true)))
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobSuspended)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect([]string{string(c.Status), c.Reason, c.Message}).To(gomega.Equal([]string{"True", "Suspended", "TrainJob is suspended"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("changing a runtime patch while suspended, then resuming in the same update, as Kueue does")
		gomega.Eventually(func(g gomega.Gomega) {
			cur := get(g, tj)
			cur.Spec.Suspend = ptr.To(false)
			cur.Spec.RuntimePatches = []trainer.RuntimePatch{utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).
				PodSpec("node", trainer.PodSpecPatch{NodeSelector: map[string]string{"pool": "a"}}).Obj()}
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := jobSetOf(g, tj)
			g.Expect(js.Spec.Suspend).To(gomega.Equal(ptr.To(false)))
			g.Expect(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.NodeSelector).To(gomega.Equal(map[string]string{"pool": "a"}))
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobSuspended)
			g.Expect([]string{string(c.Status), c.Reason, c.Message}).To(gomega.Equal([]string{"False", "Resumed", "TrainJob is resumed"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("suspending the running job again and dropping the patch, as a Kueue preemption does")
		gomega.Eventually(func(g gomega.Gomega) {
			cur := get(g, tj)
			cur.Spec.Suspend = ptr.To(true)
			cur.Spec.RuntimePatches = nil
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := jobSetOf(g, tj)
			g.Expect(js.Spec.Suspend).To(gomega.Equal(ptr.To(true)))
			g.Expect(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.NodeSelector).To(gomega.BeEmpty())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("keeps a running job on its snapshot when the runtime changes", func() {
		tj := torchJob("frozen").Suspend(true).Obj()
		tj.Spec.Trainer.Image = nil
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(utiltesting.Job(jobSetOf(g, tj).Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("node:test"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainingRuntime{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(rt), cur)).To(gomega.Succeed())
			utiltesting.Job(cur.Spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Image = "node:edited"
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cur := get(g, tj)
			cur.Spec.Suspend = ptr.To(false)
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := jobSetOf(g, tj)
			g.Expect(js.Spec.Suspend).To(gomega.Equal(ptr.To(false)))
			g.Expect(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Image).To(gomega.Equal("node:test"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("fails a TrainJob past its activeDeadlineSeconds and deletes its JobSet", func() {
		tj := torchJob("deadline").ActiveDeadlineSeconds(1).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobFailed)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect([]string{c.Reason, c.Message}).To(gomega.Equal([]string{"DeadlineExceeded", "TrainJob exceeded its active deadline"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)
			g.Expect(err != nil || js.DeletionTimestamp != nil).To(gomega.BeTrue(), "the JobSet is still there")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("reports a missing runtime as a Warning event with firstTimestamp", func() {
		tj := utiltesting.MakeTrainJobWrapper(ns, "orphan").RuntimeRef(trainer.TrainingRuntimeKind, "missing").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
			var found *corev1.Event
			for i := range events.Items {
				if e := &events.Items[i]; e.InvolvedObject.Name == "orphan" && e.Reason == controller.ReasonResourcesCreationFailed {
					found = e
				}
			}
			g.Expect(found).NotTo(gomega.BeNil())
			g.Expect(found.Type).To(gomega.Equal(corev1.EventTypeWarning))
			g.Expect(found.FirstTimestamp.IsZero()).To(gomega.BeFalse())
			g.Expect(found.Message).To(gomega.Equal(`TrainJob resources reconciliation failed: TrainingRuntime "missing" specified in TrainJob is not found`))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(testutil.ToFloat64(metrics.ReconcileErrors.WithLabelValues(metrics.ReasonRuntimeNotFound))).To(gomega.BeNumerically(">=", 1))
		gomega.Eventually(func(g gomega.Gomega) {
			status := get(g, tj).Status
			g.Expect(status.BuildError).NotTo(gomega.BeNil())
			g.Expect(status.BuildError.Message).To(gomega.Equal(`TrainingRuntime "missing" specified in TrainJob is not found`))
			g.Expect(status.Conditions).To(gomega.BeEmpty(), "a build error adds no condition")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("creating the runtime, after which the next build succeeds and clears the error")
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "missing").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(get(g, tj).Status.BuildError).To(gomega.BeNil())
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})).To(gomega.Succeed())
		}, "30s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("creates the MPI SSH Secret and hostfile", func() {
		mpi := utiltesting.MakeTrainingRuntimeWrapper(ns, "mpi").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{}).Obj()).Obj()
		utiltesting.Job(mpi.Spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Name = "launcher"
		gomega.Expect(k8sClient.Create(ctx, mpi)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns, "mpijob").RuntimeRef(trainer.TrainingRuntimeKind, "mpi").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			secret := &corev1.Secret{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpijob-mpi-ssh-auth"}, secret)).To(gomega.Succeed())
			g.Expect(secret.Type).To(gomega.Equal(corev1.SecretTypeSSHAuth))
			g.Expect(secret.Data).To(gomega.HaveKey("ssh-privatekey"))
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpijob-mpi-hostfile"}, cm)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("forcing reconciles with nothing to change: no object is written again")
		versions := func(g gomega.Gomega) []string {
			cm, secret, js, snap := &corev1.ConfigMap{}, &corev1.Secret{}, &jobsetv1alpha2.JobSet{}, &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpijob-mpi-hostfile"}, cm)).To(gomega.Succeed())
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpijob-mpi-ssh-auth"}, secret)).To(gomega.Succeed())
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mpijob-runtime-snapshot"}, snap)).To(gomega.Succeed())
			return []string{cm.ResourceVersion, secret.ResourceVersion, js.ResourceVersion, snap.ResourceVersion}
		}
		var before []string
		gomega.Eventually(func(g gomega.Gomega) { before = versions(g) }, util.Timeout, util.Interval).Should(gomega.Succeed())
		writes := mgr.WritesIn(ns)
		fwk.TouchTrainJob(ctx, k8sClient, tj, 3)
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(versions(g)).To(gomega.Equal(before))
			g.Expect(mgr.WritesIn(ns)).To(gomega.Equal(writes), "a reconcile with nothing to change sent a write")
		}, "2s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("sizes the coscheduling PodGroup and re-renders it when a LimitRange appears", func() {
		gang := utiltesting.MakeTrainingRuntimeWrapper(ns, "gang").Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).
			Torch(&trainer.TorchMLPolicySource{}).Coscheduling(&trainer.CoschedulingPodGroupPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, gang)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns, "gang").RuntimeRef(trainer.TrainingRuntimeKind, "gang").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		pg := &schedulerpluginsv1alpha1.PodGroup{}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), pg)).To(gomega.Succeed())
			g.Expect(pg.Spec.MinMember).To(gomega.Equal(int32(4)))
			g.Expect(pg.Spec.ScheduleTimeoutSeconds).To(gomega.Equal(ptr.To[int32](60)))
			g.Expect(pg.Spec.MinResources).To(gomega.BeEmpty())
			js := jobSetOf(g, tj)
			g.Expect(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Labels).To(gomega.HaveKeyWithValue("scheduling.x-k8s.io/pod-group", "gang"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		lr := &corev1.LimitRange{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "defaults"}, Spec: corev1.LimitRangeSpec{
			Limits: []corev1.LimitRangeItem{{Type: corev1.LimitTypeContainer, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}}},
		}}
		gomega.Expect(k8sClient.Create(ctx, lr)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), pg)).To(gomega.Succeed())
			cpu := pg.Spec.MinResources[corev1.ResourceCPU]
			g.Expect(cpu.String()).To(gomega.Equal("4"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("caches only the ConfigMaps it owns", func() {
		for i := range 1000 {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("unrelated-%d", i)}}
			gomega.Expect(k8sClient.Create(ctx, cm)).To(gomega.Succeed())
		}
		tj := torchJob("cached").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cached := &corev1.ConfigMapList{}
			g.Expect(mgr.GetCache().List(ctx, cached, client.InNamespace(ns))).To(gomega.Succeed())
			var names []string
			for _, cm := range cached.Items {
				names = append(names, cm.Name)
			}
			g.Expect(names).To(gomega.ConsistOf("cached-runtime-snapshot"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})

// completeJobSet marks the TrainJob's JobSet Completed, as the JobSet controller would.
func completeJobSet(tj *trainer.TrainJob) {
	gomega.Eventually(func(g gomega.Gomega) {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
		apimeta.SetStatusCondition(&js.Status.Conditions, metav1.Condition{
			Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully",
		})
		g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
}

// histogramCount is how many observations a histogram holds.
func histogramCount(h prometheus.Histogram) uint64 {
	m := &dto.Metric{}
	gomega.Expect(h.Write(m)).To(gomega.Succeed())
	return m.GetHistogram().GetSampleCount()
}
