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
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/metrics"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// Clean-up after finish (ttl.gantry.dev annotations). envtest runs no garbage collector: a
// TrainJob deleted in the foreground keeps its deletionTimestamp and is not removed, which lets
// the specs read when it was deleted.
var _ = ginkgo.Describe("TrainJob clean-up after finish", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := torchRuntimeIn(ns).Annotation(knobs.TTLSecondsAfterFinished, "3600").Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	torchJob := func(name string) *utiltesting.TrainJobWrapper { return torchJobIn(ns, name, 2) }
	get := func(g gomega.Gomega, tj *trainer.TrainJob) *trainer.TrainJob {
		got := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
		return got
	}
	waitJobSet := func(tj *trainer.TrainJob) {
		gomega.Eventually(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	}
	// finishedAt waits for Complete and returns its transition time.
	finishedAt := func(tj *trainer.TrainJob) time.Time {
		var at time.Time
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobComplete)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
			at = c.LastTransitionTime.Time
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		return at
	}
	deletedAt := func(g gomega.Gomega, tj *trainer.TrainJob) time.Time {
		got := get(g, tj)
		g.Expect(got.DeletionTimestamp).NotTo(gomega.BeNil(), "not deleted yet")
		g.Expect(got.Finalizers).To(gomega.ContainElement(metav1.FinalizerDeleteDependents), "deleted in the foreground")
		return got.DeletionTimestamp.Time
	}
	expiredEvent := func(g gomega.Gomega, tj *trainer.TrainJob) {
		events := &corev1.EventList{}
		g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
		var reasons []string
		for _, e := range events.Items {
			if e.InvolvedObject.Name == tj.Name && e.InvolvedObject.Kind == trainer.TrainJobKind {
				reasons = append(reasons, e.Reason)
			}
		}
		g.Expect(reasons).To(gomega.ContainElement("TTLExpired"))
	}

	ginkgo.It("deletes a finished TrainJob at the end of its TTL, the TrainJob's over the runtime's, never before", func() {
		tj := torchJob("ttl").Annotation(knobs.TTLSecondsAfterFinished, "3").Obj()
		deletions := testutil.ToFloat64(metrics.TTLDeletions)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		completeJobSet(tj)
		done := finishedAt(tj)
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(get(g, tj).DeletionTimestamp).To(gomega.BeNil())
		}, time.Until(done.Add(2*time.Second)), util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			// Times in the API have a resolution of seconds.
			g.Expect(deletedAt(g, tj)).To(gomega.BeTemporally(">=", done.Add(3*time.Second)))
			expiredEvent(g, tj)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(testutil.ToFloat64(metrics.TTLDeletions)).To(gomega.BeNumerically(">", deletions))
	})

	ginkgo.It("keeps a TrainJob whose TTL was raised before it ended", func() {
		tj := torchJob("raised").Annotation(knobs.TTLSecondsAfterFinished, "2").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		completeJobSet(tj)
		done := finishedAt(tj)
		gomega.Eventually(func() error {
			cur := &trainer.TrainJob{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur); err != nil {
				return err
			}
			cur.Annotations[knobs.TTLSecondsAfterFinished] = "3600"
			return k8sClient.Update(ctx, cur)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(get(g, tj).DeletionTimestamp).To(gomega.BeNil())
		}, time.Until(done.Add(4*time.Second)), util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("deletes a TrainJob whose TTL ended while the manager was down as soon as it is back", func() {
		tj := torchJob("restart").Annotation(knobs.TTLSecondsAfterFinished, "2").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		completeJobSet(tj)
		done := finishedAt(tj)
		withManagerStopped(func() {
			gomega.Consistently(func(g gomega.Gomega) {
				g.Expect(get(g, tj).DeletionTimestamp).To(gomega.BeNil())
			}, time.Until(done.Add(3*time.Second)), util.Interval).Should(gomega.Succeed())
		})
		back := time.Now()
		gomega.Eventually(func(g gomega.Gomega) {
			deletedAt(g, tj)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(time.Since(back)).To(gomega.BeNumerically("<", 5*time.Second))
	})

	ginkgo.It("with clean-pods: All, deletes the JobSet at the finish and keeps the TrainJob and its status", func() {
		tj := torchJob("clean").Annotation(knobs.TTLCleanPods, "All").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		// As JobSet reports its jobs (envtest runs no JobSet controller).
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Succeeded: 1}}
			g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		completeJobSet(tj)
		finishedAt(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the JobSet is still there: %v", err)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		var status trainer.TrainJobStatus
		gomega.Eventually(func(g gomega.Gomega) { status = get(g, tj).Status }, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(status.JobsStatus).NotTo(gomega.BeEmpty())
		fwk.TouchTrainJob(ctx, k8sClient, tj, 3)
		gomega.Consistently(func(g gomega.Gomega) {
			got := get(g, tj)
			g.Expect(got.Status).To(gomega.Equal(status))
			g.Expect(got.DeletionTimestamp).To(gomega.BeNil())
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "a JobSet was made again: %v", err)
		}, "3s", util.Interval).Should(gomega.Succeed())
	})

	// Issue 34 item 2: a runtime's defaults reach only the TrainJobs whose snapshot Gantry took.
	// A TrainJob that finished before Gantry ran (Kubeflow Trainer's, migrated) has none, and
	// its runtime's TTL must not delete it, pods included.
	ginkgo.It("never applies a runtime's TTL or clean-pods to a finished TrainJob Gantry did not build", func() {
		rt := torchRuntimeIn(ns).Annotation(knobs.TTLSecondsAfterFinished, "1").Annotation(knobs.TTLCleanPods, "All").Obj()
		rt.Name = "short"
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := torchJob("migrated").RuntimeRef(trainer.TrainingRuntimeKind, "short").Obj()
		withManagerStopped(func() {
			// As Kubeflow Trainer left it: its JobSet, completed, and the TrainJob Complete.
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: tj.Name,
				OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tj, trainer.GroupVersion.WithKind(trainer.TrainJobKind))}}}
			js.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{{Name: "node", Replicas: 1, Template: batchv1.JobTemplateSpec{
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{RestartPolicy: corev1.RestartPolicyNever,
					Containers: []corev1.Container{{Name: "node", Image: "pytorch:2"}}}}}}}}
			gomega.Expect(k8sClient.Create(ctx, js)).To(gomega.Succeed())
			completeJobSet(tj)
			cur := get(gomega.Default, tj)
			apimeta.SetStatusCondition(&cur.Status.Conditions, metav1.Condition{Type: trainer.TrainJobComplete,
				Status: metav1.ConditionTrue, Reason: "JobSetCompleted", Message: "jobset completed successfully"})
			gomega.Expect(k8sClient.Status().Update(ctx, cur)).To(gomega.Succeed())
		})
		fwk.TouchTrainJob(ctx, k8sClient, tj, 2)
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(get(g, tj).DeletionTimestamp).To(gomega.BeNil(), "the runtime's TTL deleted a TrainJob Gantry never built")
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})).To(gomega.Succeed(),
				"the runtime's clean-pods deleted the JobSet of a TrainJob Gantry never built")
		}, "4s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("keeps the runtime's TTL a TrainJob was built with: one set on the runtime after it finished never reaches it", func() {
		tj := torchJob("later").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		completeJobSet(tj)
		finishedAt(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			rt := &trainer.TrainingRuntime{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "torch"}, rt)).To(gomega.Succeed())
			rt.Annotations[knobs.TTLSecondsAfterFinished] = "1"
			g.Expect(k8sClient.Update(ctx, rt)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		// Its snapshot gone too (deleted by someone): still the runtime's later value never applies.
		gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: tj.Name + "-runtime-snapshot"}}))).To(gomega.Succeed())
		fwk.TouchTrainJob(ctx, k8sClient, tj, 2)
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(get(g, tj).DeletionTimestamp).To(gomega.BeNil())
		}, "4s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("with clean-pods: Running, keeps a finished JobSet whose pods all ended", func() {
		tj := torchJob("running").Annotation(knobs.TTLCleanPods, "Running").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		waitJobSet(tj)
		completeJobSet(tj)
		finishedAt(tj)
		fwk.TouchTrainJob(ctx, k8sClient, tj, 2)
		gomega.Consistently(func() error {
			return k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
		}, "2s", util.Interval).Should(gomega.Succeed())
	})
})
