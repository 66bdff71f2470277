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

package testkit

import (
	"context"
	"errors"
	"fmt"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetconstants "sigs.k8s.io/jobset/pkg/constants"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// pollInterval is how often the Wait* helpers read the apiserver.
const pollInterval = 100 * time.Millisecond

// WaitForJobSet waits until Gantry has created the JobSet of the TrainJob key (same namespace
// and name, controlled by the TrainJob) and returns it.
func (g *Gantry) WaitForJobSet(ctx context.Context, key types.NamespacedName) (*jobsetv1alpha2.JobSet, error) {
	js := &jobsetv1alpha2.JobSet{}
	err := g.poll(ctx, func(ctx context.Context) error {
		if err := g.Client.Get(ctx, key, js); err != nil {
			return err
		}
		if owner := metav1.GetControllerOf(js); owner == nil || owner.Kind != trainer.TrainJobKind || owner.Name != key.Name {
			return fmt.Errorf("the JobSet %s is not controlled by the TrainJob", key)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for the JobSet of TrainJob %s: %w", key, err)
	}
	return js, nil
}

// WaitForTrainJob waits until the TrainJob key has the condition conditionType (such as
// trainer.TrainJobComplete or trainer.TrainJobFailed) with status True, and returns it.
func (g *Gantry) WaitForTrainJob(ctx context.Context, key types.NamespacedName, conditionType string) (*trainer.TrainJob, error) {
	tj := &trainer.TrainJob{}
	err := g.poll(ctx, func(ctx context.Context) error {
		if err := g.Client.Get(ctx, key, tj); err != nil {
			return err
		}
		if !apimeta.IsStatusConditionTrue(tj.Status.Conditions, conditionType) {
			return fmt.Errorf("conditions are %v", tj.Status.Conditions)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for TrainJob %s to be %s: %w", key, conditionType, err)
	}
	return tj, nil
}

// CompleteTrainJob waits for the TrainJob's JobSet and marks it Completed as the JobSet
// controller does once every Job succeeded, so that Gantry marks the TrainJob Complete (reason
// AllJobsCompleted). It returns the updated JobSet; WaitForTrainJob waits for the TrainJob.
func (g *Gantry) CompleteTrainJob(ctx context.Context, key types.NamespacedName) (*jobsetv1alpha2.JobSet, error) {
	return g.UpdateJobSetStatus(ctx, key, func(js *jobsetv1alpha2.JobSet) error {
		return complete(js, metav1.Now())
	})
}

// FailTrainJob waits for the TrainJob's JobSet and marks it Failed as the JobSet controller does
// when a Job fails beyond its failure policy, so that Gantry marks the TrainJob Failed with the
// same reason and message. An empty reason and message are the JobSet controller's for failed
// Jobs (FailedJobs, "jobset failed due to one or more job failures"). It returns the updated
// JobSet.
func (g *Gantry) FailTrainJob(ctx context.Context, key types.NamespacedName, reason, message string) (*jobsetv1alpha2.JobSet, error) {
	return g.UpdateJobSetStatus(ctx, key, func(js *jobsetv1alpha2.JobSet) error {
		return fail(js, reason, message, metav1.Now())
	})
}

// UpdateJobSetStatus waits for the TrainJob's JobSet, calls mutate on it and writes its status,
// again from a fresh read when another writer got there first. It plays the JobSet controller
// for states the kit has no helper for (running Jobs, restarts); an error of mutate is returned
// as is.
func (g *Gantry) UpdateJobSetStatus(ctx context.Context, key types.NamespacedName, mutate func(*jobsetv1alpha2.JobSet) error) (*jobsetv1alpha2.JobSet, error) {
	js, err := g.WaitForJobSet(ctx, key)
	if err != nil {
		return nil, err
	}
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		if err := g.Client.Get(ctx, key, js); err != nil {
			return err
		}
		if err := mutate(js); err != nil {
			return err
		}
		return g.Client.Status().Update(ctx, js)
	})
	if err != nil {
		return nil, fmt.Errorf("updating the status of JobSet %s: %w", key, err)
	}
	return js, nil
}

// complete sets the status the JobSet controller writes when every Job has succeeded.
func complete(js *jobsetv1alpha2.JobSet, now metav1.Time) error {
	if done, err := finished(js, jobsetv1alpha2.JobSetCompleted); done || err != nil {
		return err
	}
	js.Status.ReplicatedJobsStatus = jobsStatus(js, func(rj jobsetv1alpha2.ReplicatedJob, s *jobsetv1alpha2.ReplicatedJobStatus) {
		s.Succeeded = rj.Replicas
	})
	apimeta.SetStatusCondition(&js.Status.Conditions, metav1.Condition{
		Type:               string(jobsetv1alpha2.JobSetCompleted),
		Status:             metav1.ConditionTrue,
		Reason:             jobsetconstants.AllJobsCompletedReason,
		Message:            jobsetconstants.AllJobsCompletedMessage,
		LastTransitionTime: now,
	})
	js.Status.TerminalState = string(jobsetv1alpha2.JobSetCompleted)
	return nil
}

// fail sets the status the JobSet controller writes when a Job of the first replicated job has
// failed and the failure policy allows no restart.
func fail(js *jobsetv1alpha2.JobSet, reason, message string, now metav1.Time) error {
	if done, err := finished(js, jobsetv1alpha2.JobSetFailed); done || err != nil {
		return err
	}
	if reason == "" && message == "" {
		reason, message = jobsetconstants.FailedJobsReason, jobsetconstants.FailedJobsMessage
	}
	if reason == "" {
		return errors.New("a failure with a message needs a reason: conditions require one")
	}
	first := true
	js.Status.ReplicatedJobsStatus = jobsStatus(js, func(_ jobsetv1alpha2.ReplicatedJob, s *jobsetv1alpha2.ReplicatedJobStatus) {
		if first {
			s.Failed, first = 1, false
		}
	})
	apimeta.SetStatusCondition(&js.Status.Conditions, metav1.Condition{
		Type:               string(jobsetv1alpha2.JobSetFailed),
		Status:             metav1.ConditionTrue,
		Reason:             reason,
		Message:            message,
		LastTransitionTime: now,
	})
	js.Status.TerminalState = string(jobsetv1alpha2.JobSetFailed)
	return nil
}

// finished reports whether js already ended as outcome (nothing to do), and refuses what the
// JobSet controller never does: change a finished JobSet's outcome, or finish a suspended one.
func finished(js *jobsetv1alpha2.JobSet, outcome jobsetv1alpha2.JobSetConditionType) (bool, error) {
	for _, t := range []jobsetv1alpha2.JobSetConditionType{jobsetv1alpha2.JobSetCompleted, jobsetv1alpha2.JobSetFailed} {
		if !apimeta.IsStatusConditionTrue(js.Status.Conditions, string(t)) {
			continue
		}
		if t == outcome {
			return true, nil
		}
		return false, fmt.Errorf("the JobSet %s/%s already %s: a finished JobSet never changes", js.Namespace, js.Name, t)
	}
	if js.Spec.Suspend != nil && *js.Spec.Suspend {
		return false, fmt.Errorf("the JobSet %s/%s is suspended (so is its TrainJob, or it waits for admission): its Jobs cannot finish", js.Namespace, js.Name)
	}
	return false, nil
}

// jobsStatus returns one status per replicated job, every counter zero but what set sets: the
// Jobs of a finished JobSet are neither active nor ready.
func jobsStatus(js *jobsetv1alpha2.JobSet, set func(jobsetv1alpha2.ReplicatedJob, *jobsetv1alpha2.ReplicatedJobStatus)) []jobsetv1alpha2.ReplicatedJobStatus {
	out := make([]jobsetv1alpha2.ReplicatedJobStatus, 0, len(js.Spec.ReplicatedJobs))
	for _, rj := range js.Spec.ReplicatedJobs {
		s := jobsetv1alpha2.ReplicatedJobStatus{Name: rj.Name}
		set(rj, &s)
		out = append(out, s)
	}
	return out
}

// poll calls get until it succeeds, for at most the kit's timeout; the error names the last
// failure. Each try gets the caller's context, not the timeout's: a try the deadline cut short
// would report the deadline instead of what was missing.
func (g *Gantry) poll(ctx context.Context, get func(context.Context) error) error {
	pollCtx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(pollCtx, pollInterval, true, func(context.Context) (bool, error) {
		last = get(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return fmt.Errorf("%w (gave up after %s)", last, g.timeout)
	}
	return err
}
