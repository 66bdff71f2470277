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
	"context"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// Simulation annotations the cluster's kwok Stages read (test/localcluster/kwok-stages.yaml).
const (
	simDuration   = "sim.gantry.dev/duration"
	simExitCode   = "sim.gantry.dev/exit-code"
	simStartDelay = "sim.gantry.dev/start-delay"
	jobSetNameKey = jobsetv1alpha2.JobSetNameKey
	// simManager owns the runtime patches the suite adds to its TrainJobs.
	simManager = "e2e.gantry.dev/simulation"
)

// newNamespace is a fresh namespace for the spec, deleted (with everything in it) when it ends.
func newNamespace(prefix string) string { return util.NewNamespace(ctx, k8sClient, prefix) }

// gpus is a per-node resource request of n GPUs, as a limit (how users write it).
func gpus(n int) *corev1.ResourceRequirements {
	return &corev1.ResourceRequirements{Limits: corev1.ResourceList{
		localcluster.GPUResource: *resource.NewQuantity(int64(n), resource.DecimalSI),
	}}
}

// trainJob is a TrainJob of a runtime with numNodes nodes of gpusPerNode GPUs.
func trainJob(ns, name, runtimeKind, runtime string, numNodes int32, gpusPerNode int) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtime, Kind: ptr.To(runtimeKind)},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To(numNodes), ResourcesPerNode: gpus(gpusPerNode)},
		},
	}
}

// simulate sets pod annotations of the simulation on replicated jobs, through a runtime patch:
// jobs maps a replicated job name to its pods' annotations.
func simulate(tj *trainer.TrainJob, jobs map[string]map[string]string) *trainer.TrainJob {
	names := make([]string, 0, len(jobs))
	for n := range jobs {
		names = append(names, n)
	}
	sort.Strings(names)
	patch := trainer.RuntimePatch{Manager: simManager, TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{
		Template: &trainer.JobSetTemplatePatch{Spec: &trainer.JobSetSpecPatch{}},
	}}
	for _, n := range names {
		patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs = append(patch.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs,
			trainer.ReplicatedJobPatch{Name: n, Template: &trainer.JobTemplatePatch{Spec: &trainer.JobSpecPatch{
				Template: &trainer.PodTemplatePatch{Metadata: &metav1.ObjectMeta{Annotations: jobs[n]}},
			}}})
	}
	tj.Spec.RuntimePatches = append(tj.Spec.RuntimePatches, patch)
	return tj
}

func getTrainJob(key client.ObjectKey) *trainer.TrainJob {
	tj := &trainer.TrainJob{}
	gomega.Expect(k8sClient.Get(ctx, key, tj)).To(gomega.Succeed())
	return tj
}

// conditionTrue is the TrainJob's condition of that type, if it holds.
func conditionTrue(tj *trainer.TrainJob, condType string) *metav1.Condition {
	c := meta.FindStatusCondition(tj.Status.Conditions, condType)
	if c == nil || c.Status != metav1.ConditionTrue {
		return nil
	}
	return c
}

// expectCondition waits until the TrainJob has the condition and returns it.
func expectCondition(key client.ObjectKey, condType string) *metav1.Condition {
	var cond *metav1.Condition
	gomega.Eventually(func(g gomega.Gomega) {
		tj := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, key, tj)).To(gomega.Succeed())
		cond = conditionTrue(tj, condType)
		g.Expect(cond).NotTo(gomega.BeNil(), "conditions: %v", tj.Status.Conditions)
	}).Should(gomega.Succeed())
	return cond
}

// podsOf lists the pods of a TrainJob (its JobSet has its name).
func podsOf(ns, name string) []corev1.Pod {
	pods := &corev1.PodList{}
	gomega.Expect(k8sClient.List(ctx, pods, client.InNamespace(ns), client.MatchingLabels{jobSetNameKey: name})).To(gomega.Succeed())
	return pods.Items
}

// active is true for a pod that holds its node's resources: bound and not finished.
func active(p *corev1.Pod) bool {
	return p.Spec.NodeName != "" && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

func activePods(ns, name string) []string {
	var out []string
	for _, p := range podsOf(ns, name) {
		if active(&p) {
			out = append(out, p.Name)
		}
	}
	return out
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

var fieldRefAnnotation = regexp.MustCompile(`^metadata\.annotations\['(.+)'\]$`)

// envOf resolves a container's environment variable as the kubelet would, for the literal values
// and downward-API fields the controllers render.
func envOf(p *corev1.Pod, container, name string) string {
	for _, c := range p.Spec.Containers {
		if c.Name != container {
			continue
		}
		for _, e := range c.Env {
			if e.Name != name {
				continue
			}
			if e.ValueFrom == nil {
				return e.Value
			}
			gomega.Expect(e.ValueFrom.FieldRef).NotTo(gomega.BeNil(), "%s of %s", name, p.Name)
			path := e.ValueFrom.FieldRef.FieldPath
			if m := fieldRefAnnotation.FindStringSubmatch(path); m != nil {
				return p.Annotations[m[1]]
			}
			switch path {
			case "metadata.name":
				return p.Name
			case "metadata.namespace":
				return p.Namespace
			}
			ginkgo.Fail(fmt.Sprintf("%s of pod %s: field %s is not resolved by the suite", name, p.Name, path))
		}
	}
	ginkgo.Fail(fmt.Sprintf("pod %s has no env %s in container %s", p.Name, name, container))
	return ""
}

// podEvent is one change of a pod as a watch delivered it.
type podEvent struct {
	at      time.Time
	pod     *corev1.Pod
	deleted bool
}

// podRecorder keeps every pod event of a namespace in the order the watch delivered them (the
// apiserver's order for one resource), for assertions over a whole run rather than samples.
type podRecorder struct {
	mu     sync.Mutex
	events []podEvent
	// onAdd runs for each new pod, in the informer's goroutine.
	onAdd func(*corev1.Pod)
}

// recordPods starts recording the pods of ns until the spec ends.
func recordPods(ns string, onAdd func(*corev1.Pod)) *podRecorder {
	r := &podRecorder{onAdd: onAdd}
	informers, err := cache.New(restConfig, cache.Options{Scheme: testScheme, DefaultNamespaces: map[string]cache.Config{ns: {}}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	inf, err := informers.GetInformer(ctx, &corev1.Pod{})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	add := func(obj any, deleted bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		p, ok := obj.(*corev1.Pod)
		if !ok {
			return
		}
		r.mu.Lock()
		r.events = append(r.events, podEvent{at: time.Now(), pod: p.DeepCopy(), deleted: deleted})
		r.mu.Unlock()
	}
	_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(o any) {
			add(o, false)
			if p, ok := o.(*corev1.Pod); ok && r.onAdd != nil {
				r.onAdd(p)
			}
		},
		UpdateFunc: func(_, o any) { add(o, false) },
		DeleteFunc: func(o any) { add(o, true) },
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	rctx, cancel := context.WithCancel(ctx)
	ginkgo.DeferCleanup(cancel)
	go func() { _ = informers.Start(rctx) }()
	gomega.Expect(informers.WaitForCacheSync(rctx)).To(gomega.BeTrue())
	return r
}

func (r *podRecorder) snapshot() []podEvent {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.events)
}

// replay walks the events in order, calling visit with every pod's latest state after each one.
func (r *podRecorder) replay(visit func(ev podEvent, pods map[string]*corev1.Pod)) {
	pods := map[string]*corev1.Pod{}
	for _, ev := range r.snapshot() {
		if ev.deleted {
			delete(pods, ev.pod.Name)
		} else {
			pods[ev.pod.Name] = ev.pod
		}
		visit(ev, pods)
	}
}

// jobSetOf returns the JobSet Gantry built for a TrainJob.
func jobSetOf(key client.ObjectKey) *jobsetv1alpha2.JobSet {
	js := &jobsetv1alpha2.JobSet{}
	gomega.Eventually(func() error { return k8sClient.Get(ctx, key, js) }).Should(gomega.Succeed())
	return js
}

// jobsOf lists the batch Jobs of a TrainJob's JobSet.
func jobsOf(ns, name string) []batchv1.Job {
	jobs := &batchv1.JobList{}
	gomega.Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns), client.MatchingLabels{jobSetNameKey: name})).To(gomega.Succeed())
	return jobs.Items
}

// setSuspend updates spec.suspend, retrying on conflicts.
func setSuspend(key client.ObjectKey, suspend bool, mutate ...func(*trainer.TrainJob)) {
	gomega.Eventually(func() error {
		tj := &trainer.TrainJob{}
		if err := k8sClient.Get(ctx, key, tj); err != nil {
			return err
		}
		tj.Spec.Suspend = ptr.To(suspend)
		for _, m := range mutate {
			m(tj)
		}
		return k8sClient.Update(ctx, tj)
	}).Should(gomega.Succeed())
}

func keyOf(o client.Object) client.ObjectKey {
	return types.NamespacedName{Namespace: o.GetNamespace(), Name: o.GetName()}
}
