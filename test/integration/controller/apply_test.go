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
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// staleCache answers Get with the objects it was given, as a cache that has not seen their
// deletion yet; every other call goes to the API server.
type staleCache struct {
	client.Client
	stale map[client.ObjectKey]client.Object
}

func (c staleCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if s, ok := c.stale[key]; ok && s.GetObjectKind().GroupVersionKind().Kind == obj.GetObjectKind().GroupVersionKind().Kind {
		return c.Client.Scheme().Convert(s.DeepCopyObject(), obj, nil)
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

// The e2e suite caught it: a reconcile saw the JobSet in its cache, decided to update it, and the
// update (a server-side apply) created it again because it had been deleted meanwhile: the
// training ran again. An update of an object the applier saw must never create one.
var _ = ginkgo.Describe("Applier", func() {
	ginkgo.It("does not create again, by an update, an object deleted since the cache saw it", func() {
		ns := newNamespace()
		owner := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "owner"}}
		gomega.Expect(k8sClient.Create(ctx, owner)).To(gomega.Succeed())
		js := &jobsetv1alpha2.JobSet{
			TypeMeta:   metav1.TypeMeta{APIVersion: jobsetv1alpha2.GroupVersion.String(), Kind: "JobSet"},
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "deleted"},
			Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
				Name: "node", Replicas: 1,
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, Containers: []corev1.Container{{Name: "node", Image: "busybox"}},
				}}}},
			}}},
		}
		gomega.Expect(ctrlSetOwner(owner, js)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, js.DeepCopy())).To(gomega.Succeed())
		seen := &jobsetv1alpha2.JobSet{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(js), seen)).To(gomega.Succeed())
		seen.SetGroupVersionKind(jobsetv1alpha2.GroupVersion.WithKind("JobSet"))
		gomega.Expect(k8sClient.Delete(ctx, seen.DeepCopy())).To(gomega.Succeed())

		cache := staleCache{Client: k8sClient, stale: map[client.ObjectKey]client.Object{client.ObjectKeyFromObject(js): seen}}
		applier, err := apply.NewApplier(cache, k8sClient, "gantry-test")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		desired := js.DeepCopy()
		desired.Labels = map[string]string{"changed": "true"} // not up to date: the applier writes
		_, err = applier.Apply(ctx, owner, false, []apply.Desired{{Object: desired}})
		gomega.Expect(apierrors.IsConflict(err)).To(gomega.BeTrue(), "the update of a deleted object: %v", err)
		err = k8sClient.Get(ctx, client.ObjectKeyFromObject(js), &jobsetv1alpha2.JobSet{})
		gomega.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the JobSet was created again: %v", err)
	})
})

// ctrlSetOwner makes owner the controller of obj.
func ctrlSetOwner(owner, obj client.Object) error {
	obj.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "v1", Kind: "ConfigMap", Name: owner.GetName(),
		UID: owner.GetUID(), Controller: ptr.To(true)}})
	return nil
}

// vanishingCache answers the first Get of the JobSet key with seen, as a cache that had not yet
// seen its deletion, and NotFound afterwards, as the same cache once it has; every other call
// goes to the API server.
type vanishingCache struct {
	client.Client
	seen  *jobsetv1alpha2.JobSet
	reads *int
}

func (c vanishingCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if _, isJobSet := obj.(*jobsetv1alpha2.JobSet); !isJobSet || key != client.ObjectKeyFromObject(c.seen) {
		return c.Client.Get(ctx, key, obj, opts...)
	}
	*c.reads++
	if *c.reads > 1 {
		return apierrors.NewNotFound(jobsetv1alpha2.Resource("jobsets"), key.Name)
	}
	c.seen.DeepCopyInto(obj.(*jobsetv1alpha2.JobSet))
	return nil
}

// The e2e suite caught it again, in a narrower window: the reconcile read the JobSet, then the
// applier read its cache once more, after the cache had seen the JobSet deleted, and applied it
// as a new object. The controller tells the applier which JobSet it read, so that the write
// updates that one or fails, and the TrainJob fails with JobSetDeleted in the same reconcile.
var _ = ginkgo.Describe("TrainJob reconcile racing a JobSet deletion", func() {
	ginkgo.It("fails the TrainJob, instead of creating its JobSet again, when the cache sees the deletion between two reads", func() {
		ns := newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns, "vanishing").RuntimeRef(trainer.TrainingRuntimeKind, "torch").
			Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", []string{"torchrun"}, nil).NumNodes(1).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		gomega.Eventually(func(g gomega.Gomega) { // what JobSet's controller would report: the node job runs
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, key, js)).To(gomega.Succeed())
			js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}
			g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			got := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, key, got)).To(gomega.Succeed())
			g.Expect(got.Status.JobsStatus).NotTo(gomega.BeEmpty(), "the JobSet has not reported yet")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		withManagerStopped(func() {
			seen := &jobsetv1alpha2.JobSet{}
			gomega.Expect(k8sClient.Get(ctx, key, seen)).To(gomega.Succeed())
			patch := client.MergeFrom(seen.DeepCopy())
			seen.Finalizers = nil
			gomega.Expect(k8sClient.Patch(ctx, seen, patch)).To(gomega.Succeed())
			gomega.Expect(k8sClient.Delete(ctx, seen.DeepCopy(), client.PropagationPolicy(metav1.DeletePropagationBackground))).To(gomega.Succeed())

			rt, err := plugins.NewRuntime(framework.Options{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			r, err := controller.NewTrainJobReconciler(vanishingCache{Client: k8sClient, seen: seen, reads: new(int)},
				k8sClient, rt, record.NewFakeRecorder(100), clock.RealClock{})
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_, reconcileErr := r.Reconcile(ctx, ctrl.Request{NamespacedName: key})

			err = k8sClient.Get(ctx, key, &jobsetv1alpha2.JobSet{})
			gomega.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the JobSet was created again, the training runs again: %v", err)
			gomega.Expect(reconcileErr).NotTo(gomega.HaveOccurred())
			got := &trainer.TrainJob{}
			gomega.Expect(k8sClient.Get(ctx, key, got)).To(gomega.Succeed())
			failed := apimeta.FindStatusCondition(got.Status.Conditions, trainer.TrainJobFailed)
			gomega.Expect(failed).NotTo(gomega.BeNil(), "conditions: %v", got.Status.Conditions)
			gomega.Expect(failed.Reason).To(gomega.Equal(controller.ReasonJobSetDeleted))
			gomega.Expect(got.Status.BuildError).To(gomega.BeNil(), "a race is not a build error")
		})
	})
})
