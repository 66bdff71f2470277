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

package optimization

// Condition types of OptimizationJob.status.conditions. Upstream's API names none (it has no
// controller yet); these follow the TrainJob's words.
const (
	ConditionCreated  = "Created"
	ConditionRunning  = "Running"
	ConditionComplete = "Complete"
	ConditionFailed   = "Failed"
)

// Condition reasons.
const (
	// ReasonCreated: the controller has seen the OptimizationJob.
	ReasonCreated = "Created"
	// ReasonTrialsRunning: Running is True, trials run or are about to be created.
	ReasonTrialsRunning = "TrialsRunning"
	// ReasonSuspended: Running is False while the suspend knob holds the trials.
	ReasonSuspended = "Suspended"
	// ReasonBestTrialFound: every trial finished and at least one reported the objective.
	ReasonBestTrialFound = "BestTrialFound"
	// ReasonTooManyFailedTrials: more trials failed than the max-failed-trials knob allows.
	ReasonTooManyFailedTrials = "TooManyFailedTrials"
	// ReasonNoObjectiveReported: every trial finished and none that completed reported the
	// objective metric.
	ReasonNoObjectiveReported = "NoObjectiveReported"
	// ReasonInvalidSpec: the trials cannot be built (a template naming an unknown parameter,
	// admitted without the webhook).
	ReasonInvalidSpec = "InvalidSpec"
	// ReasonTrialNameTaken: a TrainJob that is not this OptimizationJob's has a trial's name.
	ReasonTrialNameTaken = "TrialNameTaken"
)

// Event reasons, on the OptimizationJob.
const (
	EventTrialCreated  = "TrialCreated"
	EventTrialComplete = "TrialComplete"
	EventTrialFailed   = "TrialFailed"
	EventComplete      = "Complete"
	EventFailed        = "Failed"
)
