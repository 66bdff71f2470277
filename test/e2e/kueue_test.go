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
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
)

const (
	kueueAPI      = "kueue.x-k8s.io/v1beta2"
	queueLabel    = "kueue.x-k8s.io/queue-name"
	priorityLabel = "kueue.x-k8s.io/priority-class"
)

// kueueObject is a Kueue object, kept unstructured so the suite needs none of Kueue's Go API.
func kueueObject(kind, ns, name string, fields map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: fields}
	u.SetAPIVersion(kueueAPI)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// createKueueObject creates a Kueue object and deletes it when the spec ends.
func createKueueObject(u *unstructured.Unstructured) {
	gomega.Expect(k8sClient.Create(ctx, u)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, u))).To(gomega.Succeed()) })
}

// gpuQueue sets up a ClusterQueue of 16 GPUs (CPU and memory ample) serving only ns, with
// preemption of lower priorities, and a LocalQueue "gpus" in ns pointing at it.
func gpuQueue(ns string) {
	createKueueObject(kueueObject("ResourceFlavor", "", ns, map[string]any{}))
	createKueueObject(kueueObject("ClusterQueue", "", ns, map[string]any{"spec": map[string]any{
		"namespaceSelector": map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}},
		"preemption":        map[string]any{"withinClusterQueue": "LowerPriority"},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory", "nvidia.com/gpu"},
			"flavors": []any{map[string]any{"name": ns, "resources": []any{
				map[string]any{"name": "cpu", "nominalQuota": "256"},
				map[string]any{"name": "memory", "nominalQuota": "2Ti"},
				map[string]any{"name": "nvidia.com/gpu", "nominalQuota": 16},
			}}},
		}},
	}}))
	createKueueObject(kueueObject("LocalQueue", ns, "gpus", map[string]any{"spec": map[string]any{"clusterQueue": ns}}))
	gomega.Eventually(func(g gomega.Gomega) {
		cq := kueueObject("ClusterQueue", "", ns, map[string]any{})
		g.Expect(k8sClient.Get(ctx, keyOf(cq), cq)).To(gomega.Succeed())
		conds, _, _ := unstructured.NestedSlice(cq.Object, "status", "conditions")
		g.Expect(conds).To(gomega.ContainElement(gomega.And(
			gomega.HaveKeyWithValue("type", "Active"), gomega.HaveKeyWithValue("status", "True"))))
	}).Should(gomega.Succeed())
}

func queued(tj *trainer.TrainJob, priorityClass string) *trainer.TrainJob {
	tj.Labels = map[string]string{queueLabel: "gpus"}
	if priorityClass != "" {
		tj.Labels[priorityLabel] = priorityClass
	}
	return tj
}

// suspendWatch records, for every pod as it appears, whether its TrainJob was suspended then.
type suspendWatch struct {
	mu         sync.Mutex
	violations []string
}

func (w *suspendWatch) onAdd(p *corev1.Pod) {
	name := p.Labels[jobSetNameKey]
	tj := &trainer.TrainJob{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: p.Namespace, Name: name}, tj); err != nil {
		return
	}
	if ptr.Deref(tj.Spec.Suspend, false) {
		w.mu.Lock()
		defer w.mu.Unlock()
		w.violations = append(w.violations, fmt.Sprintf("pod %s appeared while TrainJob %s was suspended", p.Name, name))
	}
}

// maxRunning is the most TrainJobs that held nodes at once over the recorded run. A terminating
// pod does not count: a preempted Job stops counting it as active at once, Kueue takes the quota
// back when the TrainJob's Jobs report nothing active, and the next job's pods may then start
// while the stopped ones are still going away (slower on a loaded machine).
func maxRunning(rec *podRecorder) int {
	most := 0
	rec.replay(func(_ podEvent, pods map[string]*corev1.Pod) {
		running := map[string]bool{}
		for _, p := range pods {
			if active(p) && p.DeletionTimestamp == nil {
				running[p.Labels[jobSetNameKey]] = true
			}
		}
		most = max(most, len(running))
	})
	return most
}

type podSetCount struct {
	Name  string
	Count int64
}

// workloadPodSets are the PodSets of the Workload Kueue made for a TrainJob, with the counts it
// admitted.
func workloadPodSets(ns string, tj *trainer.TrainJob) (spec, admitted []podSetCount) {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(kueueAPI)
	list.SetKind("WorkloadList")
	gomega.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(gomega.Succeed())
	for _, wl := range list.Items {
		owners := wl.GetOwnerReferences()
		if len(owners) == 0 || owners[0].UID != tj.UID {
			continue
		}
		podSets, _, _ := unstructured.NestedSlice(wl.Object, "spec", "podSets")
		for _, ps := range podSets {
			m := ps.(map[string]any)
			spec = append(spec, podSetCount{Name: m["name"].(string), Count: m["count"].(int64)})
		}
		assignments, _, _ := unstructured.NestedSlice(wl.Object, "status", "admission", "podSetAssignments")
		for _, a := range assignments {
			m := a.(map[string]any)
			admitted = append(admitted, podSetCount{Name: m["name"].(string), Count: m["count"].(int64)})
		}
	}
	return spec, admitted
}

// replicatedJobCounts are the replicated jobs of a JobSet with the pods each runs.
func replicatedJobCounts(js *jobsetv1alpha2.JobSet) []podSetCount {
	var out []podSetCount
	for _, rj := range js.Spec.ReplicatedJobs {
		out = append(out, podSetCount{Name: rj.Name, Count: int64(rj.Replicas) * int64(ptr.Deref(rj.Template.Spec.Parallelism, 1))})
	}
	return out
}

func sortedCounts(c []podSetCount) []podSetCount {
	sort.Slice(c, func(i, j int) bool { return c[i].Name < c[j].Name })
	return c
}

var _ = ginkgo.Describe("Kueue admitting TrainJobs", func() {
	var ns string
	ginkgo.BeforeEach(func() {
		ns = newNamespace("e2e-kueue")
		gpuQueue(ns)
	})

	ginkgo.It("runs at most two 8-GPU TrainJobs at a time in a 16-GPU queue, each as Kueue admitted it", func() {
		watch := &suspendWatch{}
		rec := recordPods(ns, watch.onAdd)
		short := map[string]string{simDuration: "4s"}
		jobs := []*trainer.TrainJob{
			simulate(queued(trainJob(ns, "one", clusterRuntime, "torch-distributed", 1, 8), ""), map[string]map[string]string{"node": short}),
			simulate(queued(trainJob(ns, "two", clusterRuntime, "torch-distributed", 1, 8), ""), map[string]map[string]string{"node": short}),
			simulate(queued(trainJob(ns, "split", clusterRuntime, "torch-distributed", 2, 4), ""), map[string]map[string]string{"node": short}),
			simulate(queued(trainJob(ns, "mpi", clusterRuntime, "deepspeed-distributed", 2, 4), ""),
				map[string]map[string]string{"node": short, "launcher": short}),
		}
		for _, tj := range jobs {
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			// Kueue's webhook suspends a queued TrainJob on creation.
			gomega.Expect(tj.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()), tj.Name)
		}
		for _, tj := range jobs {
			expectCondition(keyOf(tj), trainer.TrainJobComplete)
		}
		gomega.Expect(maxRunning(rec)).To(gomega.Equal(2))
		watch.mu.Lock()
		gomega.Expect(watch.violations).To(gomega.BeEmpty())
		watch.mu.Unlock()

		for _, tj := range jobs {
			got := getTrainJob(keyOf(tj))
			want := sortedCounts(replicatedJobCounts(jobSetOf(keyOf(tj))))
			spec, admitted := workloadPodSets(ns, got)
			gomega.Expect(sortedCounts(spec)).To(gomega.Equal(want), "Workload podSets of %s", tj.Name)
			gomega.Expect(sortedCounts(admitted)).To(gomega.Equal(want), "admitted podSets of %s", tj.Name)
		}
	})

	ginkgo.It("keeps the TTL annotation through Kueue's admission, and deletes the TrainJob on time", func() {
		tj := simulate(queued(trainJob(ns, "ttl", clusterRuntime, "torch-distributed", 1, 8), ""),
			map[string]map[string]string{"node": {simDuration: "2s"}})
		tj.Annotations = map[string]string{knobs.TTLSecondsAfterFinished: "3"}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(tj.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()), "Kueue's webhook suspends it")
		done := expectCondition(keyOf(tj), trainer.TrainJobComplete).LastTransitionTime.Time
		got := getTrainJob(keyOf(tj))
		gomega.Expect(got.Spec.Suspend).To(gomega.HaveValue(gomega.BeFalse()), "Kueue admitted it with an update")
		gomega.Expect(got.Annotations).To(gomega.HaveKeyWithValue(knobs.TTLSecondsAfterFinished, "3"))
		var deleted time.Time
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			err := k8sClient.Get(ctx, keyOf(tj), cur)
			if apierrors.IsNotFound(err) {
				deleted = time.Now()
				return
			}
			g.Expect(err).NotTo(gomega.HaveOccurred())
			g.Expect(cur.DeletionTimestamp).NotTo(gomega.BeNil())
			deleted = cur.DeletionTimestamp.Time
		}).Should(gomega.Succeed())
		gomega.Expect(deleted).To(gomega.BeTemporally(">=", done.Add(3*time.Second)))
		gomega.Expect(deleted).To(gomega.BeTemporally("<", done.Add(3*time.Second+10*time.Second)))
	})

	ginkgo.It("stops the pods of a preempted TrainJob and resumes it once there is room", func() {
		low, high := ns+"-low", ns+"-high"
		createKueueObject(kueueObject("WorkloadPriorityClass", "", low, map[string]any{"value": int64(10)}))
		createKueueObject(kueueObject("WorkloadPriorityClass", "", high, map[string]any{"value": int64(1000)}))
		rec := recordPods(ns, nil)
		lows := []*trainer.TrainJob{
			simulate(queued(trainJob(ns, "low-a", clusterRuntime, "torch-distributed", 1, 8), low), map[string]map[string]string{"node": {simDuration: "15s"}}),
			simulate(queued(trainJob(ns, "low-b", clusterRuntime, "torch-distributed", 1, 8), low), map[string]map[string]string{"node": {simDuration: "15s"}}),
		}
		for _, tj := range lows {
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		}
		for _, tj := range lows {
			gomega.Eventually(func() []string { return runningPods(ns, tj.Name) }).Should(gomega.HaveLen(1), tj.Name)
		}
		urgent := simulate(queued(trainJob(ns, "urgent", clusterRuntime, "torch-distributed", 1, 8), high),
			map[string]map[string]string{"node": {simDuration: "2s"}})
		gomega.Expect(k8sClient.Create(ctx, urgent)).To(gomega.Succeed())

		var victim *trainer.TrainJob
		gomega.Eventually(func(g gomega.Gomega) {
			var suspended []*trainer.TrainJob
			for _, tj := range lows {
				if got := getTrainJob(keyOf(tj)); ptr.Deref(got.Spec.Suspend, false) {
					suspended = append(suspended, got)
				}
			}
			g.Expect(suspended).To(gomega.HaveLen(1))
			victim = suspended[0]
		}).Should(gomega.Succeed())
		gomega.Eventually(func() []string { return activePods(ns, victim.Name) }).Should(gomega.BeEmpty())
		expectCondition(keyOf(urgent), trainer.TrainJobComplete)

		// Re-admitted once the urgent job is done: new pods, and it completes.
		for _, tj := range lows {
			expectCondition(keyOf(tj), trainer.TrainJobComplete)
		}
		gomega.Expect(maxRunning(rec)).To(gomega.BeNumerically("<=", 2))
		runs := map[string]bool{}
		killed := 0
		for _, ev := range rec.snapshot() {
			if ev.pod.Labels[jobSetNameKey] != victim.Name {
				continue
			}
			runs[ev.pod.Name] = true
			for _, cs := range ev.pod.Status.ContainerStatuses {
				if ev.pod.DeletionTimestamp != nil && cs.State.Terminated != nil && cs.State.Terminated.ExitCode == 143 {
					killed++
				}
			}
		}
		gomega.Expect(runs).To(gomega.HaveLen(2), "pods of %s: the preempted one and the resumed one", victim.Name)
		gomega.Expect(killed).To(gomega.BeNumerically(">", 0), "the preempted pod was stopped")
	})
})
