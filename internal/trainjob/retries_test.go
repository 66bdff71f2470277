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

package trainjob

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

var retryNow = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// batchJob is the Job node-0 of replicated job "node": parallelism pods, failed so far.
func batchJob(parallelism, active, ready, succeeded, failed int32, backoffLimit *int32, conds ...batchv1.JobCondition) batchv1.Job {
	return batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Name: "a-node-0", UID: "job-uid"},
		Spec:       batchv1.JobSpec{Parallelism: &parallelism, BackoffLimit: backoffLimit},
		Status: batchv1.JobStatus{Active: active, Ready: &ready, Succeeded: succeeded, Failed: failed,
			Conditions: conds},
	}
}

// failedPod is a pod of that Job whose container exited with code, ago before retryNow.
func failedPod(name string, code int32, reason string, ago time.Duration) corev1.Pod {
	return corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, OwnerReferences: []metav1.OwnerReference{{
			Kind: "Job", Name: "a-node-0", UID: types.UID("job-uid"), Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodFailed, ContainerStatuses: []corev1.ContainerStatus{{
			Name: "node", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{
				ExitCode: code, Reason: reason, FinishedAt: metav1.NewTime(retryNow.Add(-ago))}}}}},
	}
}

// TestDeriveStateWithRetries: the states of a TrainJob whose Job retries failed pods, over the
// JobSet's counts, the Job's counts and limit, and the pods' terminations.
func TestDeriveStateWithRetries(t *testing.T) {
	waiting := []trainer.JobStatus{jobs("node", 0, 0, 0, 0)}
	starting := []trainer.JobStatus{jobs("node", 1, 0, 0, 0)}
	running := []trainer.JobStatus{jobs("node", 1, 1, 0, 0)}
	cases := []struct {
		name       string
		jobsStatus []trainer.JobStatus
		conds      []metav1.Condition
		jobs       []batchv1.Job
		pods       []corev1.Pod
		want       Derived
	}{{
		name:       "both pods failed, in the backoff: retry 2 of 6, next in 20s less the 5s passed",
		jobsStatus: waiting,
		jobs:       []batchv1.Job{batchJob(2, 0, 0, 0, 2, nil)},
		pods:       []corev1.Pod{failedPod("p0", 3, "Error", 5*time.Second), failedPod("p1", 3, "Error", 6*time.Second)},
		want:       Derived{StateRestarting, "2 pods failed (exit 3), retry 2 of 6, next in ~15s"},
	}, {
		name:       "backoff passed: no next retry is promised",
		jobsStatus: waiting,
		jobs:       []batchv1.Job{batchJob(2, 0, 0, 0, 2, nil)},
		pods:       []corev1.Pod{failedPod("p0", 3, "Error", time.Minute), failedPod("p1", 3, "Error", time.Minute)},
		want:       Derived{StateRestarting, "2 pods failed (exit 3), retry 2 of 6"},
	}, {
		name:       "the backoff doubles per failure and stops at 6 minutes",
		jobsStatus: waiting,
		jobs:       []batchv1.Job{batchJob(1, 0, 0, 0, 7, ptr.To[int32](10))},
		pods:       []corev1.Pod{failedPod("p0", 1, "Error", time.Minute)},
		want:       Derived{StateRestarting, "7 pods failed (exit 1), retry 7 of 10, next in ~5m0s"},
	}, {
		name:       "OOMKilled and an other exit code, replacements starting: the JobSet says active",
		jobsStatus: starting,
		jobs:       []batchv1.Job{batchJob(2, 2, 0, 0, 2, ptr.To[int32](3))},
		pods:       []corev1.Pod{failedPod("p0", 137, "OOMKilled", time.Minute), failedPod("p1", 1, "Error", time.Minute)},
		want:       Derived{StateRestarting, "2 pods failed (exit 137 OOMKilled, exit 1), retry 2 of 3"},
	}, {
		name:       "one pod failed while the other runs: not Running",
		jobsStatus: running,
		jobs:       []batchv1.Job{batchJob(2, 1, 1, 0, 1, nil)},
		pods:       []corev1.Pod{failedPod("p1", 3, "Error", 2*time.Second)},
		want:       Derived{StateRestarting, "1 pod failed (exit 3), retry 1 of 6, next in ~8s"},
	}, {
		name:       "the failed pods are gone: the Job's counts still tell",
		jobsStatus: waiting,
		jobs:       []batchv1.Job{batchJob(1, 0, 0, 0, 1, nil)},
		want:       Derived{StateRestarting, "1 pod failed, retry 1 of 6"},
	}, {
		name:       "every pod back and ready after a retry: Running, and says so",
		jobsStatus: running,
		jobs:       []batchv1.Job{batchJob(2, 2, 2, 0, 2, nil)},
		pods:       []corev1.Pod{failedPod("p0", 3, "Error", time.Hour), failedPod("p1", 3, "Error", time.Hour)},
		want:       Derived{StateRunning, "recovered from 2 pod failures (retry 2 of 6)"},
	}, {
		name:       "no failure: pods pending",
		jobsStatus: waiting,
		jobs:       []batchv1.Job{batchJob(2, 0, 0, 0, 0, nil)},
		want:       Derived{StateCreated, "waiting for pods"},
	}, {
		name:       "no failure: running",
		jobsStatus: running,
		jobs:       []batchv1.Job{batchJob(2, 2, 2, 0, 0, nil)},
		want:       Derived{StateRunning, ""},
	}, {
		name:       "the Job reached its backoff limit, the JobSet not yet told: its failed Job wins",
		jobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 0, 1)},
		jobs: []batchv1.Job{batchJob(2, 0, 0, 0, 7, nil, batchv1.JobCondition{
			Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded"})},
		want: Derived{StateRestarting, "node: 1 failed"},
	}, {
		name:       "a finished Job's old failures are not a restart",
		jobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 1, 0)},
		jobs: []batchv1.Job{batchJob(1, 0, 0, 1, 2, nil, batchv1.JobCondition{
			Type: batchv1.JobComplete, Status: corev1.ConditionTrue})},
		want: Derived{StateRunning, ""},
	}, {
		name:       "the Failed condition wins over retries",
		jobsStatus: waiting,
		conds:      []metav1.Condition{cond("Failed", "True", "FailedJobs", "jobset failed")},
		jobs:       []batchv1.Job{batchJob(1, 0, 0, 0, 1, nil)},
		want:       Derived{StateFailed, "jobset failed"},
	}, {
		name:       "per-index backoff: the count is per index, so no \"of\"",
		jobsStatus: waiting,
		jobs: []batchv1.Job{func() batchv1.Job {
			j := batchJob(2, 0, 0, 0, 2, nil)
			j.Spec.BackoffLimitPerIndex = ptr.To[int32](1)
			return j
		}()},
		pods: []corev1.Pod{failedPod("p0", 3, "Error", time.Minute)},
		want: Derived{StateRestarting, "2 pods failed (exit 3)"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tj := &trainer.TrainJob{
				ObjectMeta: metav1.ObjectMeta{Name: "a"},
				Status:     trainer.TrainJobStatus{Conditions: tc.conds, JobsStatus: tc.jobsStatus},
			}
			got := DeriveState(tj, nil, &Children{Jobs: tc.jobs, Pods: tc.pods, Now: retryNow})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("DeriveStateWith (-want +got):\n%s", diff)
			}
		})
	}
}
