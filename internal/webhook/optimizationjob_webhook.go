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

package webhook

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-optimizationjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=optimizationjobs,verbs=create;update,versions=v1alpha1,name=validator.optimizationjob.trainer.kubeflow.org,admissionReviewVersions=v1

// OptimizationJobValidator makes the checks an OptimizationJob's schema cannot: that its
// trials can be named and built. It needs no other object. It is registered whatever the
// OptimizationJob feature gate says, as the installed webhook configuration names it.
type OptimizationJobValidator struct{}

var _ admission.Validator[*trainer.OptimizationJob] = OptimizationJobValidator{}

// ValidateCreate checks a new OptimizationJob.
func (OptimizationJobValidator) ValidateCreate(_ context.Context, oj *trainer.OptimizationJob) (admission.Warnings, error) {
	warnings, errs := ValidateOptimizationJob(oj)
	return warnings, errs.ToAggregate()
}

// ValidateUpdate checks the knobs only: the spec is immutable (the schema says so), and an
// OptimizationJob admitted before a rule existed must still be suspendable and deletable.
func (OptimizationJobValidator) ValidateUpdate(_ context.Context, _, oj *trainer.OptimizationJob) (admission.Warnings, error) {
	return nil, knobs.ValidateOptimizationJob(oj.Annotations).ToAggregate()
}

// ValidateDelete allows every deletion.
func (OptimizationJobValidator) ValidateDelete(context.Context, *trainer.OptimizationJob) (admission.Warnings, error) {
	return nil, nil
}

// ValidateOptimizationJob is the create check: the name leaves room for the trials' names,
// every ${trialParameters.<name>} of the template names a parameter, a grid fits in numTrials,
// Int search spaces hold an integer, the template keeps its trials (no TTL), and the knobs.
func ValidateOptimizationJob(oj *trainer.OptimizationJob) (admission.Warnings, field.ErrorList) {
	var errs field.ErrorList
	errs = append(errs, validateOptimizationName(oj.Name)...)
	specPath := field.NewPath("spec")
	errs = append(errs, validateReferences(&oj.Spec, specPath)...)
	warnings, gridErrs := validateGrid(&oj.Spec, specPath)
	errs = append(errs, gridErrs...)
	errs = append(errs, validateIntSpaces(oj.Spec.Parameters, specPath.Child("parameters"))...)
	if _, ok := oj.Spec.TrainJobTemplate.Annotations[knobs.TTLSecondsAfterFinished]; ok {
		errs = append(errs, field.Forbidden(specPath.Child("trainJobTemplate", "metadata", "annotations").Key(knobs.TTLSecondsAfterFinished),
			"trials are kept until their OptimizationJob is deleted: a trial deleted earlier would be created again"))
	}
	errs = append(errs, knobs.ValidateOptimizationJob(oj.Annotations)...)
	return warnings, errs
}

// validateOptimizationName: trial i is the TrainJob "<name>-<i>", which must be a DNS label
// of at most 63 characters, as TrainJob names are.
func validateOptimizationName(name string) field.ErrorList {
	p := field.NewPath("metadata", "name")
	if len(name) > optimization.MaxJobNameLength {
		return field.ErrorList{field.TooLong(p, name, optimization.MaxJobNameLength)}
	}
	if msgs := validation.IsDNS1035Label(optimization.TrialName(name, 0)); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, name, "trials are named <name>-<index>, which must be valid TrainJob names: "+strings.Join(msgs, "; "))}
	}
	return nil
}

// validateReferences refuses a placeholder naming no parameter, at the string that holds it.
func validateReferences(spec *trainer.OptimizationJobSpec, specPath *field.Path) field.ErrorList {
	names := make([]string, len(spec.Parameters))
	for i, p := range spec.Parameters {
		names[i] = p.Name
	}
	var errs field.ErrorList
	for _, r := range optimization.References(&spec.TrainJobTemplate.Spec, specPath.Child("trainJobTemplate", "spec")) {
		if !slices.Contains(names, r.Name) {
			errs = append(errs, field.Invalid(r.Path, "${trialParameters."+r.Name+"}",
				fmt.Sprintf("names no parameter of spec.parameters (%s)", strings.Join(names, ", "))))
		}
	}
	return errs
}

// validateGrid refuses a grid larger than numTrials (it could not run every combination) and
// warns when numTrials exceeds it (only the grid's combinations run).
func validateGrid(spec *trainer.OptimizationJobSpec, specPath *field.Path) (admission.Warnings, field.ErrorList) {
	if !optimization.IsGrid(spec) {
		return nil, nil
	}
	size, ok := optimization.GridSize(spec.Parameters)
	if !ok {
		return nil, nil // the schema refuses a grid over non-categorical parameters
	}
	switch {
	case size > int(spec.NumTrials):
		shown := fmt.Sprint(size)
		if size > optimization.MaxTrials {
			shown = fmt.Sprintf("more than %d", optimization.MaxTrials)
		}
		return nil, field.ErrorList{field.Invalid(specPath.Child("numTrials"), spec.NumTrials,
			fmt.Sprintf("grid search over %s combinations of the categorical choices needs numTrials of at least that", shown))}
	case size < int(spec.NumTrials):
		return admission.Warnings{fmt.Sprintf("spec.numTrials: %d exceeds the grid's %d combinations; %d trials run", spec.NumTrials, size, size)}, nil
	}
	return nil, nil
}

// validateIntSpaces refuses an Int search space that holds no integer (min 0.2, max 0.8).
func validateIntSpaces(params []trainer.Parameter, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, p := range params {
		s := p.SearchSpace
		if s == nil {
			continue
		}
		check := func(name, lo, hi string, typ trainer.ParameterType) {
			if typ != trainer.ParameterTypeInt {
				return
			}
			l, h, err := optimization.Bounds(lo, hi)
			if err != nil {
				return // the schema's rules say why
			}
			if first, last := optimization.IntRange(l, h); first > last {
				errs = append(errs, field.Invalid(path.Index(i).Child("searchSpace", name), fmt.Sprintf("[%s, %s]", lo, hi), "type Int: holds no integer"))
			}
		}
		if s.Uniform != nil {
			check("uniform", s.Uniform.Min, s.Uniform.Max, s.Uniform.Type)
		}
		if s.LogUniform != nil {
			check("logUniform", s.LogUniform.Min, s.LogUniform.Max, s.LogUniform.Type)
		}
	}
	return errs
}
