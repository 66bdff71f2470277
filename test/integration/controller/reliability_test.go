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
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// These specs pin the defects the reliability review found (issue 13): each failed before its fix.
var _ = ginkgo.Describe("TrainJob controller under faults", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	torchJob := func(name string) *utiltesting.TrainJobWrapper {
		return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
			Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", []string{"torchrun"}, nil).NumNodes(2).Obj())
	}
	get := func(g gomega.Gomega, tj *trainer.TrainJob) *trainer.TrainJob {
		got := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
		return got
	}
	jobSetUID := func(tj *trainer.TrainJob) types.UID {
		var uid types.UID
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			uid = js.UID
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		return uid
	}
	// deleteJobSet deletes the TrainJob's JobSet as JobSet's TTL does (background propagation).
	deleteJobSet := func(tj *trainer.TrainJob) {
		js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: tj.Namespace, Name: tj.Name}}
		gomega.Expect(k8sClient.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(gomega.Succeed())
	}
	// noJobSetOtherThan holds while the TrainJob has no JobSet but (optionally) the one with uid,
	// after a reconcile has been seen to run.
	neverRecreated := func(tj *trainer.TrainJob, first types.UID) {
		fwk.TouchTrainJob(ctx, k8sClient, tj, 2)
		gomega.Consistently(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)
			if apierrors.IsNotFound(err) {
				return
			}
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(js.UID).To(gomega.Equal(first), "a new JobSet was created: the training runs again")
		}, "3s", util.Interval).Should(gomega.Succeed())
	}

	ginkgo.It("records the end of a JobSet that finished and was deleted while the manager was down (TTL 0), and never runs it again", func() {
		tj := torchJob("ttl").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		first := jobSetUID(tj)
		withManagerStopped(func() {
			completeJobSet(tj)
			deleteJobSet(tj)
		})
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobComplete)
			g.Expect(c).NotTo(gomega.BeNil(), "the TrainJob never recorded its JobSet's end")
			g.Expect([]string{string(c.Status), c.Reason}).To(gomega.Equal([]string{"True", "AllJobsCompleted"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "the finished JobSet is kept: %v", err)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		neverRecreated(tj, first)
	})

	ginkgo.It("records the end of a JobSet deleted right after it finished, with the manager running (TTL 0)", func() {
		tj := torchJob("ttl-live").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		first := jobSetUID(tj)
		completeJobSet(tj)
		deleteJobSet(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(apimeta.IsStatusConditionTrue(get(g, tj).Status.Conditions, trainer.TrainJobComplete)).To(gomega.BeTrue())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		neverRecreated(tj, first)
	})

	ginkgo.It("fails a running TrainJob whose JobSet is deleted, instead of starting the training again", func() {
		tj := torchJob("deleted").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		first := jobSetUID(tj)
		deleteJobSet(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			c := apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobFailed)
			g.Expect(c).NotTo(gomega.BeNil(), "conditions: %v", get(g, tj).Status.Conditions)
			g.Expect([]string{string(c.Status), c.Reason}).To(gomega.Equal([]string{"True", "JobSetDeleted"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		neverRecreated(tj, first)
	})

	ginkgo.It("recreates the JobSet of a suspended TrainJob, which runs nothing until it is resumed", func() {
		tj := torchJob("queued").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		first := jobSetUID(tj)
		deleteJobSet(tj)
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			g.Expect(js.UID).NotTo(gomega.Equal(first))
			g.Expect(js.Spec.Suspend).To(gomega.Equal(ptr.To(true)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		g := gomega.Default
		g.Expect(apimeta.FindStatusCondition(get(g, tj).Status.Conditions, trainer.TrainJobFailed)).To(gomega.BeNil())
	})

	ginkgo.It("removes from a suspended JobSet what a dropped runtime patch had added", func() {
		patch := utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).JobSetLabel("queue", "a").
			PodSpec("node", trainer.PodSpecPatch{NodeSelector: map[string]string{"pool": "a"}}).Obj()
		tj := torchJob("dropped").Suspend(true).RuntimePatches(patch).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			g.Expect(js.Labels).To(gomega.HaveKeyWithValue("queue", "a"))
			g.Expect(nodeJob(js).Template.Spec.Template.Spec.NodeSelector).To(gomega.Equal(map[string]string{"pool": "a"}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("dropping the patch while the TrainJob stays suspended, as Kueue does when it stops a job")
		gomega.Eventually(func(g gomega.Gomega) {
			cur := get(g, tj)
			cur.Spec.RuntimePatches = nil
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			g.Expect(js.Labels).NotTo(gomega.HaveKey("queue"), "the dropped label stayed")
			g.Expect(nodeJob(js).Template.Spec.Template.Spec.NodeSelector).To(gomega.BeEmpty(), "the dropped nodeSelector stayed")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("refuses to adopt a ConfigMap or Secret it did not create", func() {
		mpi := utiltesting.MakeTrainingRuntimeWrapper(ns, "mpi").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{}).Obj()).Obj()
		utiltesting.Job(mpi.Spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Name = "launcher"
		gomega.Expect(k8sClient.Create(ctx, mpi)).To(gomega.Succeed())
		theirs := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "victim-mpi-hostfile"},
			Data: map[string]string{"hostfile": "mine"}}
		gomega.Expect(k8sClient.Create(ctx, theirs)).To(gomega.Succeed())
		keys := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "victim-mpi-ssh-auth"},
			Type: corev1.SecretTypeSSHAuth, Data: map[string][]byte{"ssh-privatekey": []byte("attacker's key")}}
		gomega.Expect(k8sClient.Create(ctx, keys)).To(gomega.Succeed())

		tj := utiltesting.MakeTrainJobWrapper(ns, "victim").RuntimeRef(trainer.TrainingRuntimeKind, "mpi").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			status := get(g, tj).Status
			g.Expect(status.BuildError).NotTo(gomega.BeNil(), "the build went ahead")
			g.Expect(status.BuildError.Message).To(gomega.ContainSubstring("not owned by this TrainJob"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		fwk.TouchTrainJob(ctx, k8sClient, tj, 1)
		gomega.Consistently(func(g gomega.Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(theirs), cm)).To(gomega.Succeed())
			g.Expect(cm.OwnerReferences).To(gomega.BeEmpty(), "the TrainJob adopted someone else's ConfigMap")
			g.Expect(cm.Data).To(gomega.Equal(map[string]string{"hostfile": "mine"}))
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "a JobSet mounting someone else's objects was created")
		}, "2s", util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("creates the runtime snapshot immutable", func() {
		tj := torchJob("immutable").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "immutable-runtime-snapshot"}, cm)).To(gomega.Succeed())
			g.Expect(cm.Immutable).To(gomega.Equal(ptr.To(true)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("refuses a mutable runtime snapshot, which Gantry did not write", func() {
		tj := torchJob("forged").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		var snapshot *corev1.ConfigMap
		gomega.Eventually(func(g gomega.Gomega) {
			snapshot = &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "forged-runtime-snapshot"}, snapshot)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		withManagerStopped(func() {
			forged := snapshot.DeepCopy()
			gomega.Expect(k8sClient.Delete(ctx, snapshot)).To(gomega.Succeed())
			forged.ResourceVersion, forged.UID, forged.Immutable = "", "", nil
			gomega.Expect(k8sClient.Create(ctx, forged)).To(gomega.Succeed())
		})
		fwk.TouchTrainJob(ctx, k8sClient, tj, 1)
		gomega.Eventually(func(g gomega.Gomega) {
			status := get(g, tj).Status
			g.Expect(status.BuildError).NotTo(gomega.BeNil())
			g.Expect(status.BuildError.Message).To(gomega.ContainSubstring("is mutable"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	// Issue 34 item 9: anyone who may create ConfigMaps could put an immutable one, owned by the
	// TrainJob, in place of its snapshot and choose what it is built from.
	ginkgo.It("refuses an immutable runtime snapshot without Gantry's label, which Gantry did not create", func() {
		tj := torchJob("unlabelled").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		var snapshot *corev1.ConfigMap
		gomega.Eventually(func(g gomega.Gomega) {
			snapshot = &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unlabelled-runtime-snapshot"}, snapshot)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		withManagerStopped(func() {
			forged := snapshot.DeepCopy()
			gomega.Expect(k8sClient.Delete(ctx, snapshot)).To(gomega.Succeed())
			forged.ResourceVersion, forged.UID, forged.Labels = "", "", nil
			gomega.Expect(k8sClient.Create(ctx, forged)).To(gomega.Succeed())
		})
		fwk.TouchTrainJob(ctx, k8sClient, tj, 1)
		gomega.Eventually(func(g gomega.Gomega) {
			status := get(g, tj).Status
			g.Expect(status.BuildError).NotTo(gomega.BeNil())
			g.Expect(status.BuildError.Message).To(gomega.ContainSubstring("lacks the label trainer.kubeflow.org/trainjob-name=unlabelled"))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})

// nodeJob is the JobSet's replicated job "node".
func nodeJob(js *jobsetv1alpha2.JobSet) *jobsetv1alpha2.ReplicatedJob {
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == "node" {
			return &js.Spec.ReplicatedJobs[i]
		}
	}
	gomega.Expect(js.Spec.ReplicatedJobs).To(gomega.ContainElement(gomega.HaveField("Name", "node")))
	return nil
}
