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

// Package optimization holds what an OptimizationJob means, apart from the API: its trials'
// parameter values (random and grid search), the substitution of those values into the trial
// template, the objective a trial reports and which trial is best, and the labels and
// annotations that tie a trial TrainJob to its OptimizationJob. The controller, the webhook and
// the tools that show OptimizationJobs ask it; nothing here reads the API server.
package optimization

// Labels and annotations on trial TrainJobs. They are Gantry's own (no upstream controller
// exists yet), so they carry Gantry's prefix.
const (
	// JobNameLabel is the name of the OptimizationJob a trial belongs to.
	JobNameLabel = "optimization.gantry.dev/job-name"
	// TrialIndexLabel is the trial's index, "0" to "99": its place in the search order.
	TrialIndexLabel = "optimization.gantry.dev/trial-index"
	// ParametersAnnotation holds the trial's parameter values as a JSON list of {name, value}
	// in spec.parameters order: written at creation, read back instead of recomputed.
	ParametersAnnotation = "optimization.gantry.dev/trial-parameters"
	// OutcomeAnnotation is the trial's outcome (Complete or Failed) once the controller has
	// counted it and emitted its event, so that a restart does not report it twice.
	OutcomeAnnotation = "optimization.gantry.dev/trial-outcome"
	// SuspendedByAnnotation marks a trial the controller suspended (the OptimizationJob was
	// suspended or failed); a resume clears spec.suspend only on trials so marked, so it never
	// releases a trial that Kueue or the template holds suspended.
	SuspendedByAnnotation = "optimization.gantry.dev/suspended"
)

// MaxTrials is the schema's bound on numTrials; trial indices are 0 to MaxTrials-1.
const MaxTrials = 100

// maxTrialSuffix is the longest "-<index>" a trial name adds to its OptimizationJob's name.
const maxTrialSuffix = len("-99")

// MaxJobNameLength is the longest OptimizationJob name whose trials' names are valid TrainJob
// names (at most 63 characters).
const MaxJobNameLength = 63 - maxTrialSuffix
