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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The OptimizationJob types follow Kubeflow Trainer's main branch (commit 8c0f5059, merged in
// kubeflow/trainer#3552 and #3883), which no released module holds: the generated CRD must match
// upstream's schema path by path (optimizationjob_schema_test.go holds it to the table in
// testdata/optimizationjob_schema.md). Gantry's own settings of an OptimizationJob are
// annotations (internal/knobs), never fields here.

// OptimizationJob searches hyperparameters: it runs trials, each a TrainJob built from
// spec.trainJobTemplate with the trial's parameter values, and reports the best trial.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
type OptimizationJob struct {
	metav1.TypeMeta `json:",inline"`

	// metadata of the OptimizationJob.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the search to run; immutable once created.
	// +required
	Spec OptimizationJobSpec `json:"spec,omitzero"`

	// status is what the controller observed.
	// +optional
	Status OptimizationJobStatus `json:"status,omitzero"`
}

// OptimizationJobSpec is the search: what to optimise, over which parameters, how, and the
// TrainJob each trial runs.
//
// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="OptimizationJobSpec is immutable and cannot be updated after creation"
// +kubebuilder:validation:XValidation:rule="self.parallelTrials <= self.numTrials",message="parallelTrials cannot exceed numTrials"
// +kubebuilder:validation:XValidation:rule="!has(self.searchAlgorithm.grid) || self.parameters.all(p, has(p.searchSpace.categorical))",message="Grid search requires all parameters to be Categorical; Uniform and LogUniform are not supported."
type OptimizationJobSpec struct {
	// objectives are the metrics to optimise; exactly one today.
	// +required
	// +listType=map
	// +listMapKey=metric
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=1
	Objectives []Objective `json:"objectives,omitempty"`

	// searchAlgorithm chooses the trials' parameter values: random (the default) or grid.
	// +optional
	// +kubebuilder:default={random: {}}
	SearchAlgorithm *SearchAlgorithm `json:"searchAlgorithm,omitempty"`

	// parameters are the hyperparameters searched, each with its search space.
	// +required
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	Parameters []Parameter `json:"parameters,omitempty"`

	// numTrials is how many trials run in all.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	NumTrials int32 `json:"numTrials,omitempty"`

	// parallelTrials is how many trials may be unfinished at once.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=100
	ParallelTrials int32 `json:"parallelTrials,omitempty"`

	// trainJobTemplate is the TrainJob each trial runs, its parameter values substituted.
	// +required
	TrainJobTemplate TrainJobTemplateSpec `json:"trainJobTemplate,omitzero"`
}

// ObjectiveDirection says whether the objective metric should go up or down.
//
// +kubebuilder:validation:Enum=Maximize;Minimize
type ObjectiveDirection string

// The objective directions.
const (
	ObjectiveDirectionMaximize ObjectiveDirection = "Maximize"
	ObjectiveDirectionMinimize ObjectiveDirection = "Minimize"
)

// Objective is a metric the trials report and the direction it should go.
type Objective struct {
	// metric is the name of a metric in the trials' status.trainerStatus.metrics.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Metric string `json:"metric,omitempty"`

	// direction is Maximize or Minimize (the default).
	// +optional
	// +kubebuilder:default=Minimize
	Direction ObjectiveDirection `json:"direction,omitempty"`
}

// SearchAlgorithm is exactly one of the search algorithms.
//
// +kubebuilder:validation:ExactlyOneOf=random;grid
type SearchAlgorithm struct {
	// random samples each parameter from its search space.
	// +optional
	Random *RandomAlgorithm `json:"random,omitempty"`

	// grid runs every combination of the categorical choices.
	// +optional
	Grid *GridAlgorithm `json:"grid,omitempty"`
}

// RandomAlgorithm is random search.
type RandomAlgorithm struct {
	// seed makes the trials' values reproducible; the controller picks a documented default
	// when it is unset.
	// +optional
	Seed *int64 `json:"seed,omitempty"`
}

// GridAlgorithm is grid search; it has no settings.
type GridAlgorithm struct{}

// Parameter is one searched hyperparameter.
type Parameter struct {
	// name is how the trial template refers to the parameter.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name,omitempty"`

	// searchSpace is where the parameter's values come from.
	// +required
	SearchSpace *SearchSpace `json:"searchSpace,omitempty"`
}

// SearchSpace is exactly one distribution.
//
// +kubebuilder:validation:ExactlyOneOf=uniform;logUniform;categorical
type SearchSpace struct {
	// uniform is a uniform distribution over [min, max].
	// +optional
	Uniform *UniformSpace `json:"uniform,omitempty"`

	// logUniform is a distribution over [min, max] uniform in the logarithm.
	// +optional
	LogUniform *LogUniformSpace `json:"logUniform,omitempty"`

	// categorical is a set of strings.
	// +optional
	Categorical *CategoricalSpace `json:"categorical,omitempty"`
}

// ParameterType is what a numeric parameter's values are.
//
// +kubebuilder:validation:Enum=Int;Float
type ParameterType string

// The parameter types.
const (
	ParameterTypeInt   ParameterType = "Int"
	ParameterTypeFloat ParameterType = "Float"
)

// UniformSpace is a uniform distribution over [min, max].
//
// +kubebuilder:validation:XValidation:rule="double(self.min) < double(self.max)",message="min must be strictly less than max"
type UniformSpace struct {
	// min is the lower bound, a decimal number.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	Min string `json:"min,omitempty"`

	// max is the upper bound, a decimal number.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	Max string `json:"max,omitempty"`

	// type is Int or Float (the default).
	// +optional
	// +kubebuilder:default=Float
	Type ParameterType `json:"type,omitempty"`
}

// LogUniformSpace is a distribution over [min, max] whose logarithm is uniform.
//
// +kubebuilder:validation:XValidation:rule="double(self.min) > 0.0",message="min must be strictly greater than 0"
// +kubebuilder:validation:XValidation:rule="double(self.min) < double(self.max)",message="min must be strictly less than max"
type LogUniformSpace struct {
	// min is the lower bound, a decimal number above 0.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	Min string `json:"min,omitempty"`

	// max is the upper bound, a decimal number.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	// +kubebuilder:validation:Pattern=`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`
	Max string `json:"max,omitempty"`

	// type is Int or Float (the default).
	// +optional
	// +kubebuilder:default=Float
	Type ParameterType `json:"type,omitempty"`
}

// CategoricalSpace is a set of string values.
type CategoricalSpace struct {
	// choices are the values, each at most 64 characters.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=100
	// +kubebuilder:validation:items:MaxLength=64
	Choices []string `json:"choices,omitempty"`
}

// TrainJobTemplateSpec is the TrainJob a trial runs. The controller names it.
type TrainJobTemplateSpec struct {
	// metadata are the trial TrainJobs' labels and annotations; name and namespace are the
	// controller's.
	// +optional
	// +kubebuilder:validation:XValidation:rule="!has(self.name) && !has(self.namespace)",message="name and namespace cannot be set in a template."
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec is the trial TrainJobs' spec, before substitution.
	// +required
	Spec TrainJobSpec `json:"spec,omitzero"`
}

// OptimizationJobStatus is what the controller observed.
type OptimizationJobStatus struct {
	// conditions are Created, Running, Complete and Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +kubebuilder:validation:MaxItems=100
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// result is the best trial so far.
	// +optional
	Result *OptimizationResult `json:"result,omitempty"`
}

// OptimizationResult is a trial and the parameter values it ran with.
type OptimizationResult struct {
	// trainJobName is the trial's TrainJob.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	TrainJobName string `json:"trainJobName,omitempty"`

	// parameters are the trial's parameter values.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	Parameters []ParameterAssignment `json:"parameters,omitempty"`
}

// ParameterAssignment is one parameter's value in a trial.
type ParameterAssignment struct {
	// name of the parameter.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name,omitempty"`

	// value the trial ran with, as substituted into its template.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value,omitempty"`
}

// OptimizationJobList is a list of OptimizationJobs.
//
// +kubebuilder:object:root=true
type OptimizationJobList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the list.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the OptimizationJobs.
	Items []OptimizationJob `json:"items"`
}
