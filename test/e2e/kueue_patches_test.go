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
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

const (
	// kueueManager is the runtime patch manager Kueue's TrainJob integration writes.
	kueueManager = "kueue.x-k8s.io/manager"
	// kueuePodSetLabel is the pod label Kueue's admission adds through its runtime patch.
	kueuePodSetLabel = "kueue.x-k8s.io/podset"
)

// runtimePatch returns the TrainJob's runtime patch of a manager, or nil.
func runtimePatch(tj *trainer.TrainJob, manager string) *trainer.RuntimePatch {
	for i := range tj.Spec.RuntimePatches {
		if tj.Spec.RuntimePatches[i].Manager == manager {
			return &tj.Spec.RuntimePatches[i]
		}
	}
	return nil
}

// podSetLabels are the kueue.x-k8s.io/podset labels of a JobSet's pod templates, by replicated job.
func podSetLabels(js *jobsetv1alpha2.JobSet) map[string]string {
	out := map[string]string{}
	for _, rj := range js.Spec.ReplicatedJobs {
		if v, ok := rj.Template.Spec.Template.Labels[kueuePodSetLabel]; ok {
			out[rj.Name] = v
		}
	}
	return out
}

// stagedRuntime is a runtime of three replicated jobs, dataset and model initializers and
// nodes after them, without the shared PVC (the local cluster has no storage).
func stagedRuntime(ns string) *trainer.TrainingRuntime {
	step := func(name, ancestor string, dependsOn ...string) jobsetv1alpha2.ReplicatedJob {
		rj := jobsetv1alpha2.ReplicatedJob{
			Name: name, Replicas: 1,
			Template: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: ancestor}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers:    []corev1.Container{{Name: name, Image: "python:3.12"}},
				}}},
			},
		}
		for _, d := range dependsOn {
			rj.DependsOn = append(rj.DependsOn, jobsetv1alpha2.DependsOn{Name: d, Status: jobsetv1alpha2.DependencyComplete})
		}
		return rj
	}
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "staged"},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
				step("dataset-initializer", trainer.AncestorDatasetInitializer),
				step("model-initializer", trainer.AncestorModelInitializer),
				step("node", trainer.AncestorTrainer, "dataset-initializer", "model-initializer"),
			}}},
		},
	}
}

var _ = ginkgo.Describe("Kueue's runtime patches", func() {
	var ns string
	ginkgo.BeforeEach(func() {
		ns = newNamespace("e2e-kpatch")
		gpuQueue(ns)
	})

	ginkgo.It("admits a queued TrainJob through its runtime patch, keeping the user's patches", func() {
		tj := simulate(queued(trainJob(ns, "patched", clusterRuntime, "torch-distributed", 2, 4), ""),
			map[string]map[string]string{"node": {simDuration: "3s"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		users := *runtimePatch(tj, simManager)
		gomega.Expect(tj.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()), "Kueue's webhook suspends a queued TrainJob")

		// Admission: Kueue's entry gets the pod set labels and the TrainJob is resumed.
		gomega.Eventually(func(g gomega.Gomega) {
			got := getTrainJob(keyOf(tj))
			g.Expect(got.Spec.Suspend).To(gomega.HaveValue(gomega.BeFalse()))
			g.Expect(runtimePatch(got, kueueManager)).NotTo(gomega.BeNil(), "Kueue's runtime patch")
		}).Should(gomega.Succeed())
		got := getTrainJob(keyOf(tj))
		kept := runtimePatch(got, simManager)
		gomega.Expect(kept).NotTo(gomega.BeNil(), "the user's runtime patch after Kueue's write")
		gomega.Expect(kept.TrainingRuntimeSpec).To(gomega.Equal(users.TrainingRuntimeSpec))
		gomega.Expect(podSetLabels(jobSetOf(keyOf(tj)))).To(gomega.Equal(map[string]string{"node": "node"}))

		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		for _, p := range podsOf(ns, tj.Name) {
			gomega.Expect(p.Annotations).To(gomega.HaveKeyWithValue(simDuration, "3s"), "the user's patch reached %s", p.Name)
			gomega.Expect(p.Labels).To(gomega.HaveKeyWithValue(kueuePodSetLabel, "node"), "Kueue's patch reached %s", p.Name)
		}
	})

	ginkgo.It("gives each of three replicated jobs its pod set, with its count", func() {
		rt := stagedRuntime(ns)
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		short := map[string]string{simDuration: "2s"}
		tj := simulate(queued(trainJob(ns, "staged", nsRuntime, rt.Name, 3, 4), ""),
			map[string]map[string]string{"dataset-initializer": short, "model-initializer": short, "node": short})
		// Kueue's TrainJob webhook reads the runtime from its informer: right after the runtime's
		// create it may refuse the job ("runtime 'staged' not found"); kubectl users retry too.
		gomega.Eventually(func() error { return k8sClient.Create(ctx, tj.DeepCopy()) }).Should(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)

		want := []podSetCount{{Name: "dataset-initializer", Count: 1}, {Name: "model-initializer", Count: 1}, {Name: "node", Count: 3}}
		gomega.Expect(sortedCounts(replicatedJobCounts(jobSetOf(keyOf(tj))))).To(gomega.Equal(want))
		spec, admitted := workloadPodSets(ns, getTrainJob(keyOf(tj)))
		gomega.Expect(sortedCounts(spec)).To(gomega.Equal(want), "Workload podSets")
		gomega.Expect(sortedCounts(admitted)).To(gomega.Equal(want), "admitted podSets")
		gomega.Expect(podSetLabels(jobSetOf(keyOf(tj)))).To(gomega.Equal(map[string]string{
			"dataset-initializer": "dataset-initializer", "model-initializer": "model-initializer", "node": "node",
		}))
	})

	ginkgo.It("rebuilds a preempted TrainJob while it is suspended, then runs it again on re-admission", func() {
		low, high := ns+"-low", ns+"-high"
		createKueueObject(kueueObject("WorkloadPriorityClass", "", low, map[string]any{"value": int64(10)}))
		createKueueObject(kueueObject("WorkloadPriorityClass", "", high, map[string]any{"value": int64(1000)}))
		victim := simulate(queued(trainJob(ns, "victim", clusterRuntime, "torch-distributed", 2, 8), low),
			map[string]map[string]string{"node": {simDuration: "20s"}})
		gomega.Expect(k8sClient.Create(ctx, victim)).To(gomega.Succeed())
		gomega.Eventually(func() []string { return runningPods(ns, victim.Name) }).Should(gomega.HaveLen(2))

		urgent := simulate(queued(trainJob(ns, "urgent", clusterRuntime, "torch-distributed", 1, 8), high),
			map[string]map[string]string{"node": {simDuration: "2s"}})
		gomega.Expect(k8sClient.Create(ctx, urgent)).To(gomega.Succeed())

		// Kueue's stop: suspend, and its runtime patch emptied. Gantry rebuilds the suspended
		// JobSet without Kueue's pod set labels.
		gomega.Eventually(func(g gomega.Gomega) {
			got := getTrainJob(keyOf(victim))
			g.Expect(got.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()))
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, keyOf(victim), js)).To(gomega.Succeed())
			g.Expect(js.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()))
			g.Expect(podSetLabels(js)).To(gomega.BeEmpty(), "the JobSet rebuilt from the stopped runtime patch")
		}).Should(gomega.Succeed())
		expectCondition(keyOf(victim), trainer.TrainJobSuspended)
		gomega.Eventually(func() []string { return activePods(ns, victim.Name) }).Should(gomega.BeEmpty())
		expectCondition(keyOf(urgent), trainer.TrainJobComplete)

		// Re-admitted: Kueue's labels are back, and it completes.
		gomega.Eventually(func() map[string]string { return podSetLabels(jobSetOf(keyOf(victim))) }).
			Should(gomega.Equal(map[string]string{"node": "node"}))
		expectCondition(keyOf(victim), trainer.TrainJobComplete)
	})

	ginkgo.It("leaves a queued TrainJob managed by MultiKueue to Kueue", func() {
		tj := queued(trainJob(ns, "remote", clusterRuntime, "torch-distributed", 1, 8), "")
		tj.Spec.ManagedBy = ptr.To(trainer.ManagedByMultiKueue)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			got := getTrainJob(keyOf(tj))
			g.Expect(got.Spec.ManagedBy).To(gomega.HaveValue(gomega.Equal(trainer.ManagedByMultiKueue)))
			g.Expect(got.Status.Conditions).To(gomega.BeEmpty(), "Gantry writes no status")
			g.Expect(apierrors.IsNotFound(k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{}))).To(gomega.BeTrue(), "JobSet created")
		}, 5*time.Second).Should(gomega.Succeed())
	})
})
