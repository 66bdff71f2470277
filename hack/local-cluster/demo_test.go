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

package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

func TestJobState(t *testing.T) {
	cases := map[string]struct {
		status trainer.TrainJobStatus
		want   string
	}{
		"new": {want: "Created"},
		"suspended": {
			status: trainer.TrainJobStatus{Conditions: []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionTrue}}},
			want:   "Suspended",
		},
		"resumed is not suspended": {
			status: trainer.TrainJobStatus{
				Conditions: []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionFalse}},
				JobsStatus: []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}},
			},
			want: "Running: node starting",
		},
		"one phase per replicated job": {
			status: trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{
				{Name: "dataset-initializer", Succeeded: ptr.To[int32](1)},
				{Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](1)},
				{Name: "launcher"},
			}},
			want: "Running: dataset-initializer done, node ready",
		},
		"failed wins": {
			status: trainer.TrainJobStatus{
				Conditions: []metav1.Condition{{Type: trainer.TrainJobFailed, Status: metav1.ConditionTrue, Message: "jobset failed"}},
				JobsStatus: []trainer.JobStatus{{Name: "node", Failed: ptr.To[int32](1)}},
			},
			want: "Failed: jobset failed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, jobState(&trainer.TrainJob{Status: tc.status})); diff != "" {
				t.Errorf("jobState (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodState(t *testing.T) {
	gpu := corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}
	cases := map[string]struct {
		pod  corev1.Pod
		want string
	}{
		"created": {want: "Pending"},
		"unschedulable": {
			pod: corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodPending, Conditions: []corev1.PodCondition{{
				Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
				Message: "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available.",
			}}}},
			want: "Pending (unschedulable: 0/4 nodes are available: 4 Insufficient nvidia.com/gpu)",
		},
		"running with GPUs": {
			pod: corev1.Pod{
				Spec:   corev1.PodSpec{NodeName: "gpu-node-2", Containers: []corev1.Container{{Resources: corev1.ResourceRequirements{Limits: gpu}}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning},
			},
			want: "Running on gpu-node-2 (8 GPUs)",
		},
		"no GPUs": {
			pod:  corev1.Pod{Spec: corev1.PodSpec{NodeName: "gpu-node-0"}, Status: corev1.PodStatus{Phase: corev1.PodSucceeded}},
			want: "Succeeded on gpu-node-0",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, podState(&tc.pod)); diff != "" {
				t.Errorf("podState (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestProgressLines(t *testing.T) {
	report := func(p, eta int32, loss string) *trainer.TrainJob {
		return &trainer.TrainJob{Status: trainer.TrainJobStatus{TrainerStatus: &trainer.TrainJobTrainerStatus{
			ProgressPercentage: ptr.To(p), EstimatedRemainingSeconds: ptr.To(eta),
			Metrics: []trainer.Metric{{Name: "loss", Value: loss}},
		}}}
	}
	// A run's reports in order: a line for the first, the first past half way, and 100%.
	reports := []*trainer.TrainJob{
		{}, report(0, 5, "2.6"), report(20, 4, "1.78"), report(60, 2, "0.51"), report(80, 1, "0.33"),
		report(100, 0, "0.224"), report(100, 0, "0.224"),
	}
	var got []string
	step := 0
	for _, tj := range reports {
		if line := progressLine(tj, &step); line != "" {
			got = append(got, line)
		}
	}
	want := []string{"progress 0%, ETA 5s, loss 2.6", "progress 60%, ETA 2s, loss 0.51", "progress 100%, ETA 0s, loss 0.224"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("progress lines (-want,+got):\n%s", diff)
	}
	progress, metrics := lastReport(reports[5])
	if diff := cmp.Diff([]string{"100%", "loss=0.224"}, []string{progress, metrics}); diff != "" {
		t.Errorf("lastReport (-want,+got):\n%s", diff)
	}
}

func TestOptState(t *testing.T) {
	cond := func(typ, msg string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Message: msg}
	}
	best := &trainer.OptimizationResult{TrainJobName: "lr-search-3", Parameters: []trainer.ParameterAssignment{{Name: "lr", Value: "4"}}}
	cases := map[string]struct {
		status trainer.OptimizationJobStatus
		want   string
	}{
		"new": {want: "Created"},
		"running, best so far": {
			status: trainer.OptimizationJobStatus{Conditions: []metav1.Condition{cond("Running", "1 of 4 trials finished (0 failed), 2 running")}, Result: best},
			want:   "Running: 1 of 4 trials finished (0 failed), 2 running (best lr-search-3, lr=4)",
		},
		"complete": {
			status: trainer.OptimizationJobStatus{Conditions: []metav1.Condition{
				{Type: "Running", Status: metav1.ConditionFalse, Message: "4 of 4 trials finished"},
				cond("Complete", "all 4 trials finished (0 failed); best trial lr-search-3"),
			}, Result: best},
			want: "Complete: all 4 trials finished (0 failed); best trial lr-search-3 (lr=4)",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, optState(&trainer.OptimizationJob{Status: tc.status})); diff != "" {
				t.Errorf("optState (-want,+got):\n%s", diff)
			}
		})
	}
}
