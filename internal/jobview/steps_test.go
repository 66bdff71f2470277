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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

// pod makes a JobSet pod of TrainJob "a"; age orders incarnations.
func pod(name, rjob, jobIdx, idx string, age int, phase corev1.PodPhase, containers ...string) corev1.Pod {
	labels := map[string]string{
		"jobset.sigs.k8s.io/jobset-name": "a", "jobset.sigs.k8s.io/replicatedjob-name": rjob,
		"jobset.sigs.k8s.io/job-index": jobIdx,
	}
	if idx != "" {
		labels["batch.kubernetes.io/job-completion-index"] = idx
	}
	p := corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, CreationTimestamp: metav1.NewTime(t0.Add(time.Duration(age) * time.Second))},
		Status:     corev1.PodStatus{Phase: phase},
	}
	for _, c := range containers {
		p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
	}
	return p
}

func TestSteps(t *testing.T) {
	gpu := pod("a-node-0-1-bbbbb", "node", "0", "1", 5, corev1.PodRunning, "node")
	gpu.Spec.Containers[0].Resources.Limits = corev1.ResourceList{
		"nvidia.com/gpu": resource.MustParse("2"), corev1.ResourceCPU: resource.MustParse("4"),
	}
	gpu.Spec.NodeName = "gpu-1"
	gpu.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "node", RestartCount: 1}}
	pods := []corev1.Pod{
		pod("a-node-0-10-ccccc", "node", "0", "10", 5, corev1.PodPending, "node"),
		gpu,
		// node-0 restarted: the newest pod wins, the old one is counted.
		pod("a-node-0-0-old00", "node", "0", "0", 1, corev1.PodFailed, "node"),
		pod("a-node-0-0-new00", "node", "0", "0", 9, corev1.PodRunning, "node"),
		pod("a-model-initializer-0-0-mmmmm", "model-initializer", "0", "0", 0, corev1.PodSucceeded, "model-initializer"),
		pod("a-dataset-initializer-0-0-ddddd", "dataset-initializer", "0", "0", 0, corev1.PodSucceeded, "dataset-initializer"),
		pod("a-launcher-0-0-lllll", "launcher", "0", "0", 2, corev1.PodRunning, "sidecar", "node"),
		pod("a-node-1-0-eeeee", "node", "1", "0", 5, corev1.PodRunning, "node"),
		{ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}},
	}
	type row struct {
		Name, Pod, Container, Node string
		Phase                      corev1.PodPhase
		Incarnations               int
		Restarts                   int32
		Devices                    int64
	}
	var got []row
	for _, s := range Steps(pods) {
		got = append(got, row{s.Name, s.Pod, s.Container, s.Node, s.Phase, s.Incarnations, s.Restarts, s.Devices})
	}
	want := []row{
		{"dataset-initializer", "a-dataset-initializer-0-0-ddddd", "dataset-initializer", "", corev1.PodSucceeded, 1, 0, 0},
		{"model-initializer", "a-model-initializer-0-0-mmmmm", "model-initializer", "", corev1.PodSucceeded, 1, 0, 0},
		{"launcher-0", "a-launcher-0-0-lllll", "node", "", corev1.PodRunning, 1, 0, 0},
		{"node-0", "a-node-0-0-new00", "node", "", corev1.PodRunning, 2, 0, 0},
		{"node-1", "a-node-0-1-bbbbb", "node", "gpu-1", corev1.PodRunning, 1, 1, 2},
		{"node-10", "a-node-0-10-ccccc", "node", "", corev1.PodPending, 1, 0, 0},
		{"node-1-0", "a-node-1-0-eeeee", "node", "", corev1.PodRunning, 1, 0, 0},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Steps (-want +got):\n%s", diff)
	}
}

func TestEvents(t *testing.T) {
	ev := func(kind, name, reason string, at time.Time, eventTimeOnly bool) corev1.Event {
		e := corev1.Event{InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name}, Reason: reason, Type: "Normal"}
		if eventTimeOnly {
			e.EventTime = metav1.NewMicroTime(at)
		} else {
			e.LastTimestamp = metav1.NewTime(at)
		}
		return e
	}
	all := []corev1.Event{
		ev("Pod", "a-node-0-0-abcde", "Started", t0.Add(3*time.Second), true),
		ev("TrainJob", "a", "Created", t0, false),
		ev("JobSet", "a", "Suspended", t0.Add(time.Second), false),
		ev("Job", "a-node-0", "SuccessfulCreate", t0.Add(2*time.Second), false),
		// TrainJob "a-node"'s objects share the prefix "a-".
		ev("TrainJob", "a-node", "Created", t0, false),
		ev("Pod", "a-node-node-0-0-abcde", "Started", t0, false),
		ev("Job", "a-node-node-0", "SuccessfulCreate", t0, false),
		// Not a kind of the job's story.
		ev("ConfigMap", "a", "Whatever", t0, false),
		ev("Pod", "a-other-0-0-abcde", "Started", t0, false),
	}
	var got []string
	for _, e := range Events("a", map[string]bool{"node": true}, all) {
		got = append(got, e.Time.Format(time.TimeOnly)+" "+e.Kind+"/"+e.Object+" "+e.Reason)
	}
	want := []string{
		"10:00:00 TrainJob/a Created",
		"10:00:01 JobSet/a Suspended",
		"10:00:02 Job/a-node-0 SuccessfulCreate",
		"10:00:03 Pod/a-node-0-0-abcde Started",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Events (-want +got):\n%s", diff)
	}
}
