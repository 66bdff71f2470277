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

package core

import (
	"encoding/json"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/util/validation/field"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// The checks of this file were CRD rules of Gantry's once. Gantry's CRDs are Kubeflow Trainer's,
// keyword for keyword (platform teams diff CRDs, MultiKueue workers may run the reference, the
// Python SDK's models are generated from the schema), so the checks Gantry keeps beyond that
// schema live in the validating webhook, with the field paths the schema rules had.

// maxDNSLabel is the longest DNS label: the longest name a Job's replicated job part, or a
// container, may have.
const maxDNSLabel = 63

const immutablePresence = "field is immutable: it cannot be added or removed after the TrainJob is created"

// ValidateTrainJob refuses what no runtime is needed to refuse (old is nil on create): a TrainJob
// without spec; adding or removing initializer, trainer or activeDeadlineSeconds after creation
// (the schema's `self == oldSelf` rules only fire when both the old and the new object carry the
// field); and runtime patch names too long to name a replicated job or a container.
func ValidateTrainJob(old, tj *trainer.TrainJob) field.ErrorList {
	specPath := field.NewPath("spec")
	if equality.Semantic.DeepEqual(tj.Spec, trainer.TrainJobSpec{}) {
		// With a spec, the schema requires runtimeRef and defaults suspend and managedBy: an empty
		// one is an absent one.
		return field.ErrorList{field.Required(specPath, "a TrainJob needs a spec, with at least spec.runtimeRef")}
	}
	var errs field.ErrorList
	if old != nil {
		for _, f := range []struct {
			name          string
			before, after bool
		}{
			{"initializer", old.Spec.Initializer != nil, tj.Spec.Initializer != nil},
			{"trainer", old.Spec.Trainer != nil, tj.Spec.Trainer != nil},
			{"activeDeadlineSeconds", old.Spec.ActiveDeadlineSeconds != nil, tj.Spec.ActiveDeadlineSeconds != nil},
		} {
			if f.before != f.after {
				errs = append(errs, field.Invalid(specPath.Child(f.name), field.OmitValueType{}, immutablePresence))
			}
		}
	}
	return append(errs, validatePatchNames(old, tj)...)
}

// validatePatchNames refuses a runtime patch naming a replicated job or a container of more than
// 63 characters: neither can exist in a runtime that runs, and the patch check that they exist
// names the runtime, not the rule. A patch unchanged since old (stored before this check, or
// admitted by Kubeflow Trainer) is left alone, so that updates of other patches, such as
// Kueue's, go through.
func validatePatchNames(old, tj *trainer.TrainJob) field.ErrorList {
	var errs field.ErrorList
	for i, p := range tj.Spec.RuntimePatches {
		if old != nil && patchUnchanged(old.Spec.RuntimePatches, p) {
			continue
		}
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		jobsPath := field.NewPath("spec", "runtimePatches").Index(i).Child("trainingRuntimeSpec", "template", "spec", "replicatedJobs")
		for j, rj := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			if len(rj.Name) > maxDNSLabel {
				errs = append(errs, field.Invalid(jobsPath.Index(j).Child("name"), rj.Name,
					"must be no more than 63 characters: JobSet names the replicated job's Jobs "+
						"<TrainJob name>-<replicated job>-<index>, which must be DNS labels (RFC 1035)"))
			}
			if rj.Template == nil || rj.Template.Spec == nil || rj.Template.Spec.Template == nil || rj.Template.Spec.Template.Spec == nil {
				continue
			}
			pod := rj.Template.Spec.Template.Spec
			podPath := jobsPath.Index(j).Child("template", "spec", "template", "spec")
			errs = append(errs, validateContainerPatchNames(podPath.Child("initContainers"), pod.InitContainers)...)
			errs = append(errs, validateContainerPatchNames(podPath.Child("containers"), pod.Containers)...)
		}
	}
	return errs
}

func validateContainerPatchNames(path *field.Path, patches []trainer.ContainerPatch) field.ErrorList {
	var errs field.ErrorList
	for k, c := range patches {
		if len(c.Name) > maxDNSLabel {
			errs = append(errs, field.Invalid(path.Index(k).Child("name"), c.Name,
				"must be no more than 63 characters: a container's name is a DNS label (RFC 1123)"))
		}
	}
	return errs
}

// patchUnchanged reports whether old holds p's manager's patch with the same content (admission
// times aside).
func patchUnchanged(old []trainer.RuntimePatch, p trainer.RuntimePatch) bool {
	for _, o := range old {
		if o.Manager == p.Manager {
			o.Time, p.Time = nil, nil
			return equality.Semantic.DeepEqual(o, p)
		}
	}
	return false
}

// RuntimeShape is which of spec and spec.template a runtime's JSON carries: its typed form cannot
// tell an absent template from an empty one (`template: {spec: {replicatedJobs: []}}`, which
// the schema admits, and which is refused for having no replicated job).
type RuntimeShape struct {
	Spec, Template bool
}

// RuntimeShapeOf reads a runtime's shape from its JSON, decoding nothing else.
func RuntimeShapeOf(raw []byte) (RuntimeShape, error) {
	var obj struct {
		Spec *struct {
			Template *struct{} `json:"template"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return RuntimeShape{}, fmt.Errorf("reading the runtime: %w", err)
	}
	return RuntimeShape{Spec: obj.Spec != nil, Template: obj.Spec != nil && obj.Spec.Template != nil}, nil
}

// ValidateRuntimeShape refuses a runtime without spec or template, which no TrainJob can run and
// Kubeflow Trainer's schema lets through, with the paths of the schema's required lists. A
// runtime it refuses is checked no further, as the apiserver calls no webhook on a schema error.
func ValidateRuntimeShape(s RuntimeShape) field.ErrorList {
	specPath := field.NewPath("spec")
	switch {
	case !s.Spec:
		return field.ErrorList{field.Required(specPath, "a runtime needs a spec, with at least spec.template")}
	case !s.Template:
		return field.ErrorList{field.Required(specPath.Child("template"), "a runtime needs a template, the JobSet its TrainJobs run")}
	}
	return nil
}
