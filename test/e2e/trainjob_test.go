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

package e2e

import (
	"sort"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/localcluster"
)

const (
	clusterRuntime = trainer.ClusterTrainingRuntimeKind
	nsRuntime      = trainer.TrainingRuntimeKind
	completionIdx  = batchv1.JobCompletionIndexAnnotation
)

var _ = ginkgo.Describe("TrainJobs on simulated GPU nodes", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace("e2e") })

	ginkgo.It("runs torch on several GPU nodes, one rank per index, and completes", func() {
		tj := trainJob(ns, "torch", clusterRuntime, "torch-distributed", 3, 8)
		tj.Spec.Trainer.NumProcPerNode = ptr.To[int32](8)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		cond := expectCondition(keyOf(tj), trainer.TrainJobComplete)
		gomega.Expect(cond.Reason).NotTo(gomega.BeEmpty())

		pods := podsOf(ns, tj.Name)
		gomega.Expect(pods).To(gomega.HaveLen(3))
		ranks := map[string]string{}
		nodes := map[string]bool{}
		for i := range pods {
			p := &pods[i]
			gomega.Expect(p.Status.Phase).To(gomega.Equal(corev1.PodSucceeded), p.Name)
			node := &corev1.Node{}
			gomega.Expect(k8sClient.Get(ctx, keyOf(&corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: p.Spec.NodeName}}), node)).To(gomega.Succeed())
			gpus := node.Status.Allocatable[localcluster.GPUResource]
			gomega.Expect(gpus.Value()).To(gomega.BeNumerically(">=", 8), "pod %s on node %s", p.Name, p.Spec.NodeName)
			gomega.Expect(node.Labels).To(gomega.HaveKeyWithValue(localcluster.GPUProductLabel, localcluster.SimulatedGPU))
			nodes[p.Spec.NodeName] = true
			index := p.Annotations[completionIdx]
			ranks[index] = envOf(p, "node", "PET_NODE_RANK")
			gomega.Expect(envOf(p, "node", "PET_NNODES")).To(gomega.Equal("3"))
			gomega.Expect(envOf(p, "node", "PET_NPROC_PER_NODE")).To(gomega.Equal("8"))
			gomega.Expect(envOf(p, "node", "PET_MASTER_ADDR")).To(gomega.Equal("torch-node-0-0.torch"))
			gomega.Expect(envOf(p, "node", "PET_MASTER_PORT")).To(gomega.Equal("29500"))
		}
		gomega.Expect(ranks).To(gomega.Equal(map[string]string{"0": "0", "1": "1", "2": "2"}))
		// Eight GPUs a pod on nodes of eight: the scheduler had to spread them.
		gomega.Expect(nodes).To(gomega.HaveLen(3))
	})

	ginkgo.It("starts the MPI launcher only once every node is Ready", func() {
		rec := recordPods(ns, nil)
		tj := trainJob(ns, "mpi", clusterRuntime, "deepspeed-distributed", 3, 4)
		// Nodes take a while to become Ready, so a launcher not waiting for them would show.
		simulate(tj, map[string]map[string]string{"node": {simStartDelay: "3s"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)

		launcherSeen := false
		rec.replay(func(ev podEvent, pods map[string]*corev1.Pod) {
			if ev.pod.Labels[jobsetv1alpha2.ReplicatedJobNameKey] != "launcher" || launcherSeen {
				return
			}
			launcherSeen = true
			ready := 0
			for _, p := range pods {
				if p.Labels[jobsetv1alpha2.ReplicatedJobNameKey] == "node" && (podReady(p) || p.Status.Phase == corev1.PodSucceeded) {
					ready++
				}
			}
			// runLauncherAsNode: three nodes are two node pods and the launcher.
			gomega.Expect(ready).To(gomega.Equal(2), "node pods Ready when the launcher pod appeared")
		})
		gomega.Expect(launcherSeen).To(gomega.BeTrue())
	})

	ginkgo.It("runs the dataset and model initializers to completion before the trainer", func() {
		rec := recordPods(ns, nil)
		tj := trainJob(ns, "tune", clusterRuntime, "torchtune-llama3.2-1b", 1, 2)
		tj.Spec.Initializer = &trainer.Initializer{
			Dataset: &trainer.DatasetInitializer{StorageUri: ptr.To("hf://tatsu-lab/alpaca")},
			Model:   &trainer.ModelInitializer{StorageUri: ptr.To("hf://meta-llama/Llama-3.2-1B-Instruct")},
		}
		simulate(tj, map[string]map[string]string{
			"dataset-initializer": {simDuration: "2s"},
			"model-initializer":   {simDuration: "3s"},
		})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)

		trainerSeen := false
		rec.replay(func(ev podEvent, pods map[string]*corev1.Pod) {
			if ev.pod.Labels[jobsetv1alpha2.ReplicatedJobNameKey] != "node" || trainerSeen {
				return
			}
			trainerSeen = true
			done := map[string]bool{}
			for _, p := range pods {
				if job := p.Labels[jobsetv1alpha2.ReplicatedJobNameKey]; job != "node" {
					done[job] = p.Status.Phase == corev1.PodSucceeded
				}
			}
			gomega.Expect(done).To(gomega.Equal(map[string]bool{"dataset-initializer": true, "model-initializer": true}),
				"initializer pods when the trainer pod appeared")
		})
		gomega.Expect(trainerSeen).To(gomega.BeTrue())
		// The shared volume was really provisioned and bound.
		pvcs := &corev1.PersistentVolumeClaimList{}
		gomega.Expect(k8sClient.List(ctx, pvcs, client.InNamespace(ns))).To(gomega.Succeed())
		gomega.Expect(pvcs.Items).NotTo(gomega.BeEmpty())
		for _, pvc := range pvcs.Items {
			gomega.Expect(pvc.Status.Phase).To(gomega.Equal(corev1.ClaimBound), pvc.Name)
		}
	})

	ginkgo.It("fails the TrainJob when a pod fails, and keeps it Failed once its JobSet is gone", func() {
		gomega.Expect(k8sClient.Create(ctx, failFastRuntime(ns))).To(gomega.Succeed())
		tj := trainJob(ns, "crash", nsRuntime, "fail-fast", 2, 1)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "1s", simExitCode: "42"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		failed := expectCondition(keyOf(tj), trainer.TrainJobFailed)
		gomega.Expect(conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobComplete)).To(gomega.BeNil())

		// The path to it was real: exit code 42 matched the Job's podFailurePolicy.
		jobs := jobsOf(ns, tj.Name)
		gomega.Expect(jobs).To(gomega.HaveLen(1))
		gomega.Expect(jobs[0].Status.Conditions).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Type", batchv1.JobFailed), gomega.HaveField("Reason", batchv1.JobReasonPodFailurePolicy))))
		exitCodes := 0
		for _, p := range podsOf(ns, tj.Name) {
			for _, cs := range p.Status.ContainerStatuses {
				if cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 42 {
					exitCodes++
				}
			}
		}
		gomega.Expect(exitCodes).To(gomega.BeNumerically(">=", 1))

		js := jobSetOf(keyOf(tj))
		gomega.Expect(k8sClient.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground))).To(gomega.Succeed())
		gomega.Eventually(func() bool { return apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{})) }).Should(gomega.BeTrue())
		gomega.Consistently(func(g gomega.Gomega) {
			got := getTrainJob(keyOf(tj))
			g.Expect(conditionTrue(got, trainer.TrainJobFailed)).To(gomega.HaveField("Reason", failed.Reason))
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{}))).To(gomega.BeTrue(), "JobSet built again")
		}, 5*time.Second).Should(gomega.Succeed())
	})

	ginkgo.It("suspends a running TrainJob, stopping its pods, and resumes it to completion", func() {
		tj := trainJob(ns, "pause", clusterRuntime, "torch-distributed", 2, 8)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).Should(gomega.HaveLen(2))

		setSuspend(keyOf(tj), true)
		expectCondition(keyOf(tj), trainer.TrainJobSuspended)
		gomega.Eventually(func() []corev1.Pod { return podsOf(ns, tj.Name) }).Should(gomega.BeEmpty())
		gomega.Consistently(func() []corev1.Pod { return podsOf(ns, tj.Name) }, 3*time.Second).Should(gomega.BeEmpty())

		// Runtime patches may change while suspended: the resumed pods run a short while.
		setSuspend(keyOf(tj), false, func(tj *trainer.TrainJob) {
			tj.Spec.RuntimePatches = nil
			simulate(tj, map[string]map[string]string{"node": {simDuration: "2s"}})
		})
		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		gomega.Expect(conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobSuspended)).To(gomega.BeNil())
		for _, p := range podsOf(ns, tj.Name) {
			gomega.Expect(p.Annotations).To(gomega.HaveKeyWithValue(simDuration, "2s"))
		}
	})

	ginkgo.It("fails a TrainJob that runs past activeDeadlineSeconds and stops its pods", func() {
		tj := trainJob(ns, "deadline", clusterRuntime, "torch-distributed", 1, 1)
		tj.Spec.ActiveDeadlineSeconds = ptr.To[int64](6)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).Should(gomega.HaveLen(1))
		failed := expectCondition(keyOf(tj), trainer.TrainJobFailed)
		gomega.Expect(failed.Reason).To(gomega.Equal(trainer.TrainJobDeadlineExceededReason))
		gomega.Expect(failed.LastTransitionTime.Sub(getTrainJob(keyOf(tj)).CreationTimestamp.Time)).To(gomega.BeNumerically(">=", 5*time.Second))
		gomega.Eventually(func() []string { return activePods(ns, tj.Name) }).Should(gomega.BeEmpty())
	})

	ginkgo.It("keeps a running TrainJob on the runtime it started with when the runtime is edited", func() {
		rt := versionedRuntime(ns, "v1")
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := trainJob(ns, "pinned", nsRuntime, rt.Name, 1, 1)
		simulate(tj, map[string]map[string]string{"node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).Should(gomega.HaveLen(1))

		gomega.Eventually(func() error {
			if err := k8sClient.Get(ctx, keyOf(rt), rt); err != nil {
				return err
			}
			utiltesting.Job(rt.Spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Env[0].Value = "v2"
			return k8sClient.Update(ctx, rt)
		}).Should(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, keyOf(tj), js)).To(gomega.Succeed())
			g.Expect(runtimeVersion(utiltesting.Job(js.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec)).To(gomega.Equal("v1"))
		}, 3*time.Second).Should(gomega.Succeed())

		// A resume builds the JobSet again, still from the runtime as it was.
		setSuspend(keyOf(tj), true)
		gomega.Eventually(func() []corev1.Pod { return podsOf(ns, tj.Name) }).Should(gomega.BeEmpty())
		setSuspend(keyOf(tj), false)
		gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).Should(gomega.HaveLen(1))
		for _, p := range podsOf(ns, tj.Name) {
			gomega.Expect(runtimeVersion(p.Spec)).To(gomega.Equal("v1"), p.Name)
		}

		// A new TrainJob gets the edited runtime.
		fresh := trainJob(ns, "fresh", nsRuntime, rt.Name, 1, 1)
		simulate(fresh, map[string]map[string]string{"node": {simDuration: "1s"}})
		gomega.Expect(k8sClient.Create(ctx, fresh)).To(gomega.Succeed())
		expectCondition(keyOf(fresh), trainer.TrainJobComplete)
		for _, p := range podsOf(ns, fresh.Name) {
			gomega.Expect(runtimeVersion(p.Spec)).To(gomega.Equal("v2"), p.Name)
		}
	})

	ginkgo.It("leaves TrainJobs managed by MultiKueue alone", func() {
		tj := trainJob(ns, "remote", clusterRuntime, "torch-distributed", 1, 8)
		tj.Spec.ManagedBy = ptr.To(trainer.ManagedByMultiKueue)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			got := getTrainJob(keyOf(tj))
			g.Expect(got.Status.Conditions).To(gomega.BeEmpty())
			g.Expect(got.Status.JobsStatus).To(gomega.BeEmpty())
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{}))).To(gomega.BeTrue(), "JobSet created")
			g.Expect(podsOf(ns, tj.Name)).To(gomega.BeEmpty())
		}, 5*time.Second).Should(gomega.Succeed())
	})
})

// runningPods are the TrainJob's pods in phase Running.
func runningPods(ns, name string) []string {
	var out []string
	for _, p := range podsOf(ns, name) {
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p.Name)
		}
	}
	sort.Strings(out)
	return out
}

// failFastRuntime is a torch runtime whose Job fails on the first pod exiting with 42 (its
// podFailurePolicy), and whose JobSet does not restart.
func failFastRuntime(ns string) *trainer.TrainingRuntime {
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "fail-fast"},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{
				ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{nodeJob(batchv1.JobSpec{
					BackoffLimit: ptr.To[int32](3),
					PodFailurePolicy: &batchv1.PodFailurePolicy{Rules: []batchv1.PodFailurePolicyRule{{
						Action:      batchv1.PodFailurePolicyActionFailJob,
						OnExitCodes: &batchv1.PodFailurePolicyOnExitCodesRequirement{Operator: batchv1.PodFailurePolicyOnExitCodesOpIn, Values: []int32{42}},
					}}},
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						RestartPolicy: corev1.RestartPolicyNever,
						Containers:    []corev1.Container{{Name: "node", Image: "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"}},
					}},
				})},
			}},
		},
	}
}

// versionedRuntime is a torch runtime whose container carries RUNTIME_VERSION=version.
func versionedRuntime(ns, version string) *trainer.TrainingRuntime {
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "versioned"},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{
				ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{nodeJob(batchv1.JobSpec{
					Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{
						Name: "node", Image: "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime",
						Env: []corev1.EnvVar{{Name: "RUNTIME_VERSION", Value: version}},
					}}}},
				})},
			}},
		},
	}
}

func nodeJob(spec batchv1.JobSpec) jobsetv1alpha2.ReplicatedJob {
	return jobsetv1alpha2.ReplicatedJob{
		Name: "node", Replicas: 1,
		Template: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}},
			Spec:       spec,
		},
	}
}

func runtimeVersion(spec corev1.PodSpec) string {
	for _, c := range spec.Containers {
		for _, e := range c.Env {
			if e.Name == "RUNTIME_VERSION" {
				return e.Value
			}
		}
	}
	return ""
}
