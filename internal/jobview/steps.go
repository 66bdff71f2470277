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

package jobview

import (
	"cmp"
	"slices"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Step is one pod slot of a TrainJob, as the Kubeflow Python SDK names them:
// "dataset-initializer", "model-initializer", "node-<index>", "launcher-<index>". A restarted
// pod takes the same step; the step shows the newest pod and counts the others.
type Step struct {
	Name string `json:"name"`
	// ReplicatedJob is the JobSet replicated job the step belongs to.
	ReplicatedJob string          `json:"replicatedJob"`
	Pod           string          `json:"pod"`
	Phase         corev1.PodPhase `json:"phase"`
	// Restarts adds up the container restarts of the newest pod.
	Restarts int32 `json:"restarts"`
	// Incarnations counts the pods seen for this step, the newest included.
	Incarnations int    `json:"incarnations"`
	Node         string `json:"node,omitempty"`
	// Devices counts the extended resources (GPUs, TPUs, ...) the pod asks for.
	Devices   int64        `json:"devices,omitempty"`
	Container string       `json:"container"`
	Started   *metav1.Time `json:"started,omitempty"`
	Created   metav1.Time  `json:"created"`
}

// StepName returns the SDK's step name of a pod of the JobSet, and false for a pod that is not
// one (no replicated-job label).
func StepName(pod *corev1.Pod) (string, bool) {
	rjob := pod.Labels[jobset.ReplicatedJobNameKey]
	if rjob == "" {
		return "", false
	}
	jobIdx := pod.Labels[jobset.JobIndexKey]
	idx := pod.Labels[batchv1.JobCompletionIndexAnnotation]
	if idx == "" {
		idx = pod.Annotations[batchv1.JobCompletionIndexAnnotation]
	}
	var parts []string
	parts = append(parts, rjob)
	// A replicated job with several Jobs (replicas > 1) needs the Job's index too; the SDK's
	// names hold for the usual replicas: 1.
	if jobIdx != "" && jobIdx != "0" {
		parts = append(parts, jobIdx)
	}
	initializer := rjob == trainjob.DatasetInitializer || rjob == trainjob.ModelInitializer
	if idx != "" && (!initializer || idx != "0") {
		parts = append(parts, idx)
	}
	return strings.Join(parts, "-"), true
}

// Steps groups the pods of one TrainJob into steps, keeping the newest pod per step, ordered
// as the job runs: initializers first, then by replicated job and index.
func Steps(pods []corev1.Pod) []Step {
	byName := map[string]*Step{}
	newest := map[string]*corev1.Pod{}
	for i := range pods {
		p := &pods[i]
		name, ok := StepName(p)
		if !ok {
			continue
		}
		s := byName[name]
		if s == nil {
			s = &Step{Name: name}
			byName[name] = s
		}
		s.Incarnations++
		if cur := newest[name]; cur == nil || newer(p, cur) {
			newest[name] = p
		}
	}
	out := make([]Step, 0, len(byName))
	for name, s := range byName {
		fillStep(s, newest[name])
		out = append(out, *s)
	}
	slices.SortFunc(out, compareSteps)
	return out
}

func newer(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	return a.Name > b.Name
}

func fillStep(s *Step, p *corev1.Pod) {
	s.ReplicatedJob = p.Labels[jobset.ReplicatedJobNameKey]
	s.Pod = p.Name
	s.Phase = p.Status.Phase
	s.Node = p.Spec.NodeName
	s.Created = p.CreationTimestamp
	s.Started = p.Status.StartTime
	s.Container = MainContainer(p)
	for _, cs := range p.Status.ContainerStatuses {
		s.Restarts += cs.RestartCount
	}
	for _, c := range p.Spec.Containers {
		s.Devices += devices(c.Resources)
	}
}

// MainContainer is the container whose logs a step shows: the one named after the replicated
// job (the SDK's rule), else "node" (the trainer container of Kubeflow's runtimes), else the first.
func MainContainer(p *corev1.Pod) string {
	rjob := p.Labels[jobset.ReplicatedJobNameKey]
	for _, want := range []string{rjob, "node"} {
		for _, c := range p.Spec.Containers {
			if c.Name == want {
				return c.Name
			}
		}
	}
	if len(p.Spec.Containers) > 0 {
		return p.Spec.Containers[0].Name
	}
	return ""
}

// devices counts the extended resources of a container: everything but CPU, memory, storage
// and huge pages, as the scheduler's extended resources are GPUs, TPUs and the like.
func devices(r corev1.ResourceRequirements) int64 {
	var n int64
	list := r.Limits
	if len(list) == 0 {
		list = r.Requests
	}
	for name, q := range list {
		if isDevice(name) {
			n += q.Value()
		}
	}
	return n
}

// stepRank puts initializers before the rest, as they run first.
func stepRank(rjob string) int {
	switch rjob {
	case trainjob.DatasetInitializer:
		return 0
	case trainjob.ModelInitializer:
		return 1
	case trainjob.LauncherJob:
		return 2
	default:
		return 3
	}
}

func compareSteps(a, b Step) int {
	if c := cmp.Compare(stepRank(a.ReplicatedJob), stepRank(b.ReplicatedJob)); c != 0 {
		return c
	}
	if c := cmp.Compare(a.ReplicatedJob, b.ReplicatedJob); c != 0 {
		return c
	}
	// node-2 before node-10: compare the numeric suffix by length first.
	if c := cmp.Compare(len(a.Name), len(b.Name)); c != 0 {
		return c
	}
	return cmp.Compare(a.Name, b.Name)
}
