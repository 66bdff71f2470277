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

package multikueue

import (
	"fmt"
	"regexp"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/localcluster"
)

// Kueue's names the specs read (Kueue's Go API is not a dependency: its objects are unstructured).
const (
	kueueAPI = "kueue.x-k8s.io/v1beta2"
	// queueLabel puts a TrainJob in the LocalQueue "gpus" each spec sets up.
	queueLabel  = "kueue.x-k8s.io/queue-name"
	queueName   = "gpus"
	jobUIDLabel = "kueue.x-k8s.io/job-uid"
	// simDuration is how long a simulated pod runs (test/localcluster/kwok-stages.yaml).
	simDuration = "sim.gantry.dev/duration"
	// simManager owns the runtime patch that sets it.
	simManager = "e2e.gantry.dev/simulation"
)

// newNamespace creates a namespace of the same name on every cluster (MultiKueue creates the
// worker's copy in the manager's namespace, which must exist there) and deletes them all when
// the spec ends.
func newNamespace(prefix string) string {
	ginkgo.GinkgoHelper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: prefix + "-"}}
	gomega.Expect(manager.Create(ctx, ns)).To(gomega.Succeed())
	for _, m := range append([]*member{manager}, workers...) {
		if m != manager {
			gomega.Expect(m.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})).To(gomega.Succeed())
		}
		ginkgo.DeferCleanup(func(m *member) {
			err := m.Delete(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns.Name}})
			// A worker the spec stopped and started again may be without it (or still starting).
			gomega.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed(), "deleting namespace %s on %s", ns.Name, m.name)
		}, m)
	}
	return ns.Name
}

// kueueObject is a Kueue object, unstructured.
func kueueObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	u.SetAPIVersion(kueueAPI)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// gpuQueues sets up, on every cluster, a ResourceFlavor and a ClusterQueue serving only ns and
// a LocalQueue "gpus" in ns: on the workers of workerGPUs GPUs each, what decides where jobs run;
// on the manager of ample GPUs and with the MultiKueue admission check, so it dispatches every
// job and the workers decide. Everything goes when the spec ends.
func gpuQueues(ns string) {
	ginkgo.GinkgoHelper()
	for _, m := range append([]*member{manager}, workers...) {
		gpus, cq := workerGPUs, map[string]any{}
		if m == manager {
			gpus = 1000
			cq["admissionChecksStrategy"] = map[string]any{"admissionChecks": []any{map[string]any{"name": localcluster.MultiKueueAdmissionCheck}}}
		}
		cq["namespaceSelector"] = map[string]any{"matchLabels": map[string]any{"kubernetes.io/metadata.name": ns}}
		cq["resourceGroups"] = []any{map[string]any{
			"coveredResources": []any{"cpu", "memory", string(localcluster.GPUResource)},
			"flavors": []any{map[string]any{"name": ns, "resources": []any{
				map[string]any{"name": "cpu", "nominalQuota": "256"},
				map[string]any{"name": "memory", "nominalQuota": "2Ti"},
				map[string]any{"name": string(localcluster.GPUResource), "nominalQuota": gpus},
			}}},
		}}
		for _, o := range []*unstructured.Unstructured{
			kueueObject("ResourceFlavor", "", ns, map[string]any{}),
			kueueObject("ClusterQueue", "", ns, cq),
			kueueObject("LocalQueue", ns, queueName, map[string]any{"clusterQueue": ns}),
		} {
			gomega.Expect(m.Create(ctx, o)).To(gomega.Succeed(), "%s %s on %s", o.GetKind(), o.GetName(), m.name)
			ginkgo.DeferCleanup(func(m *member, o *unstructured.Unstructured) {
				gomega.Expect(client.IgnoreNotFound(m.Delete(ctx, o))).To(gomega.Succeed())
			}, m, o)
		}
		gomega.Eventually(func(g gomega.Gomega) {
			u := kueueObject("ClusterQueue", "", ns, nil)
			g.Expect(m.Get(ctx, client.ObjectKeyFromObject(u), u)).To(gomega.Succeed())
			g.Expect(condition(u, "Active")).To(gomega.HaveKeyWithValue("status", "True"), "ClusterQueue %s on %s", ns, m.name)
		}).Should(gomega.Succeed())
	}
}

// condition is the condition of that type of an unstructured object, nil if it has none.
func condition(u *unstructured.Unstructured, condType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == condType {
			return m
		}
	}
	return nil
}

// trainJob is a torch TrainJob of nodes nodes of gpus GPUs in the LocalQueue "gpus", whose pods
// run for podDuration.
func trainJob(ns, name string, nodes int32, gpus int64, podDuration string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{queueLabel: queueName}},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed", Kind: ptr.To(trainer.ClusterTrainingRuntimeKind)},
			Trainer: &trainer.Trainer{NumNodes: ptr.To(nodes), ResourcesPerNode: &corev1.ResourceRequirements{
				Limits: corev1.ResourceList{localcluster.GPUResource: *resource.NewQuantity(gpus, resource.DecimalSI)},
			}},
			RuntimePatches: []trainer.RuntimePatch{{Manager: simManager, TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{
				Template: &trainer.JobSetTemplatePatch{Spec: &trainer.JobSetSpecPatch{ReplicatedJobs: []trainer.ReplicatedJobPatch{{
					Name: "node", Template: &trainer.JobTemplatePatch{Spec: &trainer.JobSpecPatch{Template: &trainer.PodTemplatePatch{
						Metadata: &metav1.ObjectMeta{Annotations: map[string]string{simDuration: podDuration}},
					}}},
				}}}},
			}}},
		},
	}
}

// workloadOf is the manager's Workload of a TrainJob, found by the job's UID as Kueue labels it.
func workloadOf(g gomega.Gomega, m *member, tj *trainer.TrainJob) *unstructured.Unstructured {
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(kueueAPI)
	list.SetKind("WorkloadList")
	g.Expect(m.List(ctx, list, client.InNamespace(tj.Namespace), client.MatchingLabels{jobUIDLabel: string(tj.UID)})).To(gomega.Succeed())
	g.Expect(list.Items).To(gomega.HaveLen(1), "the Workloads of TrainJob %s on %s", tj.Name, m.name)
	return &list.Items[0]
}

var admittedOn = regexp.MustCompile(`^The workload was admitted on "([^"]+)"`)

// expectDispatched waits until the manager's Kueue admitted the TrainJob on a worker, and returns
// that worker: the Workload's status.clusterName, which the MultiKueue check's message names too.
func expectDispatched(key client.ObjectKey) (*member, *unstructured.Unstructured) {
	ginkgo.GinkgoHelper()
	var chosen *member
	var wl *unstructured.Unstructured
	gomega.Eventually(func(g gomega.Gomega) {
		tj := &trainer.TrainJob{}
		g.Expect(manager.Get(ctx, key, tj)).To(gomega.Succeed())
		wl = workloadOf(g, manager, tj)
		name, _, _ := unstructured.NestedString(wl.Object, "status", "clusterName")
		g.Expect(name).NotTo(gomega.BeEmpty(), "status.clusterName of Workload %s", wl.GetName())
		checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
		g.Expect(checks).To(gomega.ContainElement(gomega.And(
			gomega.HaveKeyWithValue("name", localcluster.MultiKueueAdmissionCheck),
			gomega.HaveKeyWithValue("state", "Ready"),
			gomega.HaveKeyWithValue("message", gomega.MatchRegexp(admittedOn.String())))))
		chosen = workerNamed(name)
	}).Should(gomega.Succeed())
	return chosen, wl
}

func workerNamed(name string) *member {
	for _, w := range workers {
		if w.name == name {
			return w
		}
	}
	ginkgo.Fail(fmt.Sprintf("no worker %q", name))
	return nil
}

func otherWorker(w *member) *member {
	if workers[0] == w {
		return workers[1]
	}
	return workers[0]
}

// copyOn is the worker's copy of a TrainJob, nil when there is none.
func copyOn(g gomega.Gomega, w *member, key client.ObjectKey) *trainer.TrainJob {
	tj := &trainer.TrainJob{}
	err := w.Get(ctx, key, tj)
	if apierrors.IsNotFound(err) {
		return nil
	}
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return tj
}

// runningPods are the pods of the TrainJob on a cluster that are bound and Running.
func runningPods(g gomega.Gomega, m *member, key client.ObjectKey) []corev1.Pod {
	pods := &corev1.PodList{}
	g.Expect(m.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: key.Name})).To(gomega.Succeed())
	var out []corev1.Pod
	for _, p := range pods.Items {
		if p.Spec.NodeName != "" && p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil {
			out = append(out, p)
		}
	}
	return out
}

// expectRunningOn waits until the TrainJob runs on the worker: its copy there with all its pods
// running, and the manager's status saying so, as Kueue copied it back.
func expectRunningOn(w *member, key client.ObjectKey, pods int) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(copyOn(g, w, key)).NotTo(gomega.BeNil(), "the copy of %s on %s", key, w.name)
		g.Expect(runningPods(g, w, key)).To(gomega.HaveLen(pods), "running pods of %s on %s", key, w.name)
		tj := &trainer.TrainJob{}
		g.Expect(manager.Get(ctx, key, tj)).To(gomega.Succeed())
		g.Expect(tj.Status.JobsStatus).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("Name", "node"), gomega.HaveField("Active", gomega.HaveValue(gomega.BeEquivalentTo(1))))),
			"the manager's status.jobsStatus of %s", key)
	}).Should(gomega.Succeed())
}

// expectNothingOn waits until a cluster holds no copy of the TrainJob and no pod of it.
func expectNothingOn(m *member, key client.ObjectKey) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(copyOn(g, m, key)).To(gomega.BeNil(), "a copy of %s on %s", key, m.name)
		pods := &corev1.PodList{}
		g.Expect(m.List(ctx, pods, client.InNamespace(key.Namespace), client.MatchingLabels{jobsetv1alpha2.JobSetNameKey: key.Name})).To(gomega.Succeed())
		g.Expect(pods.Items).To(gomega.BeEmpty(), "pods of %s on %s", key, m.name)
	}).Should(gomega.Succeed())
}

// expectManagerCondition waits for a condition of the manager's TrainJob and returns it.
func expectManagerCondition(key client.ObjectKey, condType string) metav1.Condition {
	ginkgo.GinkgoHelper()
	var cond metav1.Condition
	gomega.Eventually(func(g gomega.Gomega) {
		tj := &trainer.TrainJob{}
		g.Expect(manager.Get(ctx, key, tj)).To(gomega.Succeed())
		c := meta.FindStatusCondition(tj.Status.Conditions, condType)
		g.Expect(c).NotTo(gomega.BeNil(), "conditions of %s on the manager: %v", key, tj.Status.Conditions)
		g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue), "condition %s of %s on the manager", condType, key)
		cond = *c
	}).Should(gomega.Succeed())
	return cond
}

// setWorkloadActive sets the manager Workload's spec.active, as `kubectl kueue stop|resume
// workload` does: how a Kueue-managed job is suspended (Kueue undoes a spec.suspend it did not
// set, since the Workload stays admitted).
func setWorkloadActive(tj *trainer.TrainJob, active bool) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		wl := workloadOf(g, manager, tj)
		patch := client.MergeFrom(wl.DeepCopy())
		g.Expect(unstructured.SetNestedField(wl.Object, active, "spec", "active")).To(gomega.Succeed())
		g.Expect(manager.Patch(ctx, wl, patch)).To(gomega.Succeed())
	}).Should(gomega.Succeed())
}
