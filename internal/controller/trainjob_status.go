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

package controller

import (
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// setSuspendedCondition records spec.suspend: Suspended=True while suspended, Suspended=False
// (Resumed) once resumed after a suspension. A job never suspended gets no condition.
func setSuspendedCondition(status *trainer.TrainJobStatus, tj *trainer.TrainJob, now metav1.Time) {
	cond := metav1.Condition{
		Type:               trainer.TrainJobSuspended,
		Status:             metav1.ConditionTrue,
		Reason:             trainer.TrainJobSuspendedReason,
		Message:            trainer.TrainJobSuspendedMessage,
		ObservedGeneration: tj.Generation,
		LastTransitionTime: now,
	}
	if !trainjob.Suspended(tj) {
		if !apimeta.IsStatusConditionTrue(status.Conditions, trainer.TrainJobSuspended) {
			return
		}
		cond.Status = metav1.ConditionFalse
		cond.Reason = trainer.TrainJobResumedReason
		cond.Message = trainer.TrainJobResumedMessage
	}
	apimeta.SetStatusCondition(&status.Conditions, cond)
}

// deadlineExceeded checks activeDeadlineSeconds. The timer starts at creation, or at the last
// resume; it does not run while suspended or once finished. It returns whether the deadline has
// passed and, if not, how long until it does (0 when there is no deadline to wait for).
func deadlineExceeded(tj *trainer.TrainJob, status *trainer.TrainJobStatus, now time.Time) (bool, time.Duration) {
	seconds := ptr.Deref(tj.Spec.ActiveDeadlineSeconds, 0)
	if seconds <= 0 || trainjob.Suspended(tj) || trainjob.Finished(status) {
		return false, 0
	}
	start := tj.CreationTimestamp.Time
	if c := apimeta.FindStatusCondition(status.Conditions, trainer.TrainJobSuspended); c != nil && c.Status == metav1.ConditionFalse {
		start = c.LastTransitionTime.Time
	}
	remaining := start.Add(time.Duration(seconds) * time.Second).Sub(now)
	if remaining <= 0 {
		return true, 0
	}
	return false, max(remaining, time.Second)
}

// setDeadlineExceeded fails the TrainJob for its deadline.
func setDeadlineExceeded(status *trainer.TrainJobStatus, tj *trainer.TrainJob, now metav1.Time) {
	apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               trainer.TrainJobFailed,
		Status:             metav1.ConditionTrue,
		Reason:             trainer.TrainJobDeadlineExceededReason,
		Message:            trainer.TrainJobDeadlineExceededMessage,
		ObservedGeneration: tj.Generation,
		LastTransitionTime: now,
	})
}

// keepTerminalConditions restores the Failed and Complete conditions the TrainJob already had: a
// JobSet that disappears or changes after the end cannot undo it.
func keepTerminalConditions(status *trainer.TrainJobStatus, previous *trainer.TrainJobStatus) {
	for _, typ := range []string{trainer.TrainJobFailed, trainer.TrainJobComplete} {
		if c := apimeta.FindStatusCondition(previous.Conditions, typ); c != nil && c.Status == metav1.ConditionTrue {
			apimeta.SetStatusCondition(&status.Conditions, *c)
		}
	}
}

// setUnsupportedRuntime fails a TrainJob whose runtimeRef names no runtime kind.
func setUnsupportedRuntime(status *trainer.TrainJobStatus, tj *trainer.TrainJob, message string, now metav1.Time) {
	apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               trainer.TrainJobFailed,
		Status:             metav1.ConditionTrue,
		Reason:             trainer.TrainJobRuntimeNotSupportedReason,
		Message:            message,
		ObservedGeneration: tj.Generation,
		LastTransitionTime: now,
	})
}

// maxBuildErrorMessage is the schema's bound on status.buildError.message.
const maxBuildErrorMessage = 1024

// setBuildError records the build error, keeping the first time a message was seen so that a
// failure that repeats does not rewrite the status on every retry, and clears it after a success.
func setBuildError(status *trainer.TrainJobStatus, previous *trainer.TrainJobBuildError, err error, now metav1.Time) {
	if err == nil {
		status.BuildError = nil
		return
	}
	msg := err.Error()
	if len(msg) > maxBuildErrorMessage {
		msg = msg[:maxBuildErrorMessage-4] + " ..."
	}
	if previous != nil && previous.Message == msg {
		status.BuildError = previous.DeepCopy()
		return
	}
	status.BuildError = &trainer.TrainJobBuildError{Message: msg, Time: now}
}

// setJobSetDeleted fails a TrainJob whose JobSet was deleted before it finished: starting the
// training again from scratch would overwrite what it wrote, so it ends here instead.
func setJobSetDeleted(status *trainer.TrainJobStatus, tj *trainer.TrainJob, now metav1.Time) {
	apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type:               trainer.TrainJobFailed,
		Status:             metav1.ConditionTrue,
		Reason:             ReasonJobSetDeleted,
		Message:            "the JobSet was deleted before it finished; Gantry does not start the training again, which would overwrite what it wrote (delete the TrainJob and create it again to run it anew)",
		ObservedGeneration: tj.Generation,
		LastTransitionTime: now,
	})
}

// deadlineFailed reports whether the TrainJob failed for its activeDeadlineSeconds.
func deadlineFailed(status *trainer.TrainJobStatus) bool {
	c := apimeta.FindStatusCondition(status.Conditions, trainer.TrainJobFailed)
	return c != nil && c.Status == metav1.ConditionTrue && c.Reason == trainer.TrainJobDeadlineExceededReason
}

// setDisabledFeatures records the optional features this build left out, and queues one Warning
// event per feature newly off (or off for another reason): told once, not on every build.
func setDisabledFeatures(s *scope, res *phaseResult, disabled []runtime.DisabledFeature) {
	previous := map[string]string{}
	for _, f := range s.tj.Status.DisabledFeatures {
		previous[f.Name] = f.Message
	}
	var features []trainer.TrainJobDisabledFeature
	for _, d := range disabled {
		msg := d.Message
		if len(msg) > maxBuildErrorMessage {
			msg = msg[:maxBuildErrorMessage-4] + " ..."
		}
		features = append(features, trainer.TrainJobDisabledFeature{Name: d.Name, Message: msg})
		if old, ok := previous[d.Name]; !ok || old != msg {
			res.warn(d.Name+disabledSuffix, msg)
		}
	}
	s.status.DisabledFeatures = features
}
