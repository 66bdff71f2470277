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

package cli

import (
	"time"

	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// goldenNS holds the jobs the golden files show; specs that change things use namespaces of
// their own.
const goldenNS = "team-a"

func runtimeSpec(nodes int32, image string, gpus int64) trainer.TrainingRuntimeSpec {
	c := corev1.Container{Name: "node", Image: image}
	if gpus > 0 {
		c.Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(gpus, resource.DecimalSI)}
	}
	return trainer.TrainingRuntimeSpec{
		MLPolicy: &trainer.MLPolicy{NumNodes: &nodes, MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
		Template: trainer.JobSetTemplateSpec{Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{
			Name: "node", Replicas: 1,
			Template: batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}},
				Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure, Containers: []corev1.Container{c},
				}}},
			},
		}}}},
	}
}

func jobStatus(name string, active, ready, succeeded, failed int32) trainer.JobStatus {
	return trainer.JobStatus{Name: name, Active: &active, Ready: &ready, Succeeded: &succeeded, Failed: &failed, Suspended: ptr.To[int32](0)}
}

func condition(t, reason, msg string, at time.Time) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: reason, Message: msg, LastTransitionTime: metav1.NewTime(at)}
}

// fixtureJob is a TrainJob with the status the test gives it (no controller runs here).
type fixtureJob struct {
	name    string
	labels  map[string]string
	runtime string
	kind    string
	nodes   *int32
	gpus    int64
	suspend bool
	status  func(now time.Time) trainer.TrainJobStatus
}

func (f fixtureJob) object(ns string) *trainer.TrainJob {
	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: f.name, Labels: f.labels},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: f.runtime},
			Trainer:    &trainer.Trainer{NumNodes: f.nodes},
			Suspend:    ptr.To(f.suspend),
		},
	}
	if f.kind != "" {
		tj.Spec.RuntimeRef.Kind = ptr.To(f.kind)
	}
	if f.gpus > 0 {
		tj.Spec.Trainer.ResourcesPerNode = &corev1.ResourceRequirements{Limits: corev1.ResourceList{
			"nvidia.com/gpu": *resource.NewQuantity(f.gpus, resource.DecimalSI)}}
	}
	return tj
}

var fixtureJobs = []fixtureJob{{
	name: "bert-ft", runtime: "torch-cli", nodes: ptr.To[int32](2), gpus: 4,
	status: func(now time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{
			JobsStatus: []trainer.JobStatus{jobStatus("dataset-initializer", 0, 0, 1, 0), jobStatus("node", 1, 1, 0, 0)},
			TrainerStatus: &trainer.TrainJobTrainerStatus{
				ProgressPercentage: ptr.To[int32](45), EstimatedRemainingSeconds: ptr.To[int32](754),
				Metrics:         []trainer.Metric{{Name: "loss", Value: "0.25"}, {Name: "accuracy", Value: "0.91"}},
				LastUpdatedTime: metav1.NewTime(now.Add(-30 * time.Second)),
			},
		}
	},
}, {
	name: "custom-run", runtime: "custom", kind: trainer.TrainingRuntimeKind,
	status: func(time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobStatus("node", 0, 0, 0, 0)}}
	},
}, {
	name: "fresh", runtime: "torch-cli",
}, {
	name: "llama-done", runtime: "torch-cli", nodes: ptr.To[int32](4), gpus: 8,
	status: func(now time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{
			Conditions: []metav1.Condition{condition("Complete", "AllJobsCompleted", "jobset completed successfully", now.Add(-20*time.Minute))},
			TrainerStatus: &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](100), EstimatedRemainingSeconds: ptr.To[int32](0),
				LastUpdatedTime: metav1.NewTime(now.Add(-21 * time.Minute))},
		}
	},
}, {
	name: "mnist-fail", runtime: "torch-cli",
	status: func(now time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{
			Conditions: []metav1.Condition{condition("Failed", "FailedJobs", "jobset failed: job node-0 reached its backoff limit", now.Add(-5*time.Minute))},
			JobsStatus: []trainer.JobStatus{jobStatus("node", 0, 0, 0, 1)},
		}
	},
}, {
	name: "paused", runtime: "torch-cli", suspend: true,
	status: func(now time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{Conditions: []metav1.Condition{condition("Suspended", "Suspended", "TrainJob is suspended", now.Add(-time.Hour))}}
	},
}, {
	name: "queued", runtime: "torch-cli", suspend: true, labels: map[string]string{"kueue.x-k8s.io/queue-name": "team-a-queue"},
}, {
	name: "restarting", runtime: "torch-cli", nodes: ptr.To[int32](2),
	status: func(time.Time) trainer.TrainJobStatus {
		return trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobStatus("node", 1, 0, 0, 1)}}
	},
}}

// createFixtures creates the runtimes and the golden namespace's jobs, pods and events, and
// returns the clock that makes every job 90 minutes old.
func createFixtures() time.Time {
	for _, obj := range []client.Object{
		&trainer.ClusterTrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Name: "torch-cli", Labels: map[string]string{trainer.FrameworkLabel: "torch"}},
			Spec:       runtimeSpec(1, "pytorch/pytorch:2.7.1-cuda12.8-cudnn9-runtime", 0),
		},
		&trainer.ClusterTrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Name: "old-torch", Labels: map[string]string{
				trainer.FrameworkLabel: "torch", trainer.SupportLabel: trainer.SupportDeprecated}},
			Spec: runtimeSpec(2, "pytorch/pytorch:2.5.0", 1),
		},
		&trainer.ClusterTrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Name: "unlabelled"}, // the SDK hides it, so does gantry
			Spec:       runtimeSpec(1, "busybox", 0),
		},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: goldenNS}},
		&trainer.TrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Namespace: goldenNS, Name: "custom", Labels: map[string]string{trainer.FrameworkLabel: "torch"}},
			Spec:       runtimeSpec(3, "ghcr.io/team-a/trainer:1.0", 2),
		},
	} {
		gomega.Expect(k8sClient.Create(ctx, obj)).To(gomega.Succeed())
	}
	var newest time.Time
	created := map[string]*trainer.TrainJob{}
	for _, f := range fixtureJobs {
		tj := f.object(goldenNS)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		created[f.name] = tj
		if t := tj.CreationTimestamp.Time; t.After(newest) {
			newest = t
		}
	}
	clock := newest.Add(90 * time.Minute)
	for _, f := range fixtureJobs {
		if f.status == nil {
			continue
		}
		tj := created[f.name]
		tj.Status = f.status(clock)
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(gomega.Succeed())
	}
	createPods(clock)
	createEvents(clock)
	return clock
}

func fixturePod(name, rjob, idx string, phase corev1.PodPhase, started time.Time, restarts int32) *corev1.Pod {
	var limits corev1.ResourceList
	if rjob == "node" {
		limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("4")}
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: goldenNS, Name: name, Labels: map[string]string{
			jobset.JobSetNameKey: "bert-ft", jobset.ReplicatedJobNameKey: rjob, jobset.JobIndexKey: "0",
			batchv1.JobCompletionIndexAnnotation: idx,
		}},
		Spec: corev1.PodSpec{NodeName: "gpu-" + idx, Containers: []corev1.Container{{Name: rjob, Image: "img",
			Resources: corev1.ResourceRequirements{Limits: limits}}}},
		Status: corev1.PodStatus{Phase: phase, StartTime: ptr.To(metav1.NewTime(started)),
			ContainerStatuses: []corev1.ContainerStatus{{Name: rjob, RestartCount: restarts}}},
	}
}

func createPods(now time.Time) {
	for _, p := range []*corev1.Pod{
		fixturePod("bert-ft-dataset-initializer-0-0-abcde", "dataset-initializer", "0", corev1.PodSucceeded, now.Add(-80*time.Minute), 0),
		fixturePod("bert-ft-node-0-0-fghij", "node", "0", corev1.PodRunning, now.Add(-70*time.Minute), 0),
		fixturePod("bert-ft-node-0-1-klmno", "node", "1", corev1.PodRunning, now.Add(-70*time.Minute), 1),
	} {
		status := p.Status
		gomega.Expect(k8sClient.Create(ctx, p)).To(gomega.Succeed())
		p.Status = status
		gomega.Expect(k8sClient.Status().Update(ctx, p)).To(gomega.Succeed())
	}
}

func createEvents(now time.Time) {
	for i, e := range []struct {
		kind, name, reason, msg string
		ago                     time.Duration
	}{
		{"TrainJob", "bert-ft", "Created", "JobSet bert-ft created", 89 * time.Minute},
		{"Job", "bert-ft-dataset-initializer-0", "SuccessfulCreate", "Created pod: bert-ft-dataset-initializer-0-0-abcde", 88 * time.Minute},
		{"Pod", "bert-ft-node-0-1-klmno", "BackOff", "Back-off restarting failed container node", 60 * time.Minute},
		{"Pod", "fresh-node-0-0-zzzzz", "Scheduled", "not about bert-ft", 10 * time.Minute},
	} {
		ev := &corev1.Event{
			ObjectMeta:     metav1.ObjectMeta{Namespace: goldenNS, Name: e.name + "." + string(rune('a'+i))},
			InvolvedObject: corev1.ObjectReference{Kind: e.kind, Name: e.name, Namespace: goldenNS},
			Reason:         e.reason, Message: e.msg, Type: corev1.EventTypeNormal, Count: 1,
			FirstTimestamp: metav1.NewTime(now.Add(-e.ago)), LastTimestamp: metav1.NewTime(now.Add(-e.ago)),
		}
		if e.reason == "BackOff" {
			ev.Type = corev1.EventTypeWarning
		}
		gomega.Expect(k8sClient.Create(ctx, ev)).To(gomega.Succeed())
	}
}
