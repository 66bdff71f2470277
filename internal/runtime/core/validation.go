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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// requiredContainer is the container each step a TrainJob overrides must have.
var requiredContainer = map[string]string{
	trainer.AncestorTrainer:            runtime.NodeContainer,
	trainer.AncestorDatasetInitializer: trainer.AncestorDatasetInitializer,
	trainer.AncestorModelInitializer:   trainer.AncestorModelInitializer,
}

// ValidateRuntime checks a TrainingRuntime or ClusterTrainingRuntime beyond its schema. old is
// nil on create. Two sets of rules apply:
//
//   - Kubeflow Trainer's: every step a TrainJob overrides runs as one Job with the container the
//     TrainJob fills in. Kubeflow Trainer checks them on every ClusterTrainingRuntime write and
//     on TrainingRuntime creation only, and so does Gantry: a TrainingRuntime update that drops
//     an initializer container is accepted, and a TrainJob that needs it is refused instead.
//   - Gantry's: what no TrainJob could ever build or run (negative or overflowing counts, a
//     dependsOn naming no earlier job, a framework policy with no trainer step, two gang
//     schedulers), checked on every write. Kubeflow Trainer accepts these runtimes and fails
//     every TrainJob using them; docs/compatibility.md lists them. Also Gantry's knobs
//     (annotations; internal/knobs) and no JobSet TTL in the template (validateJobSetTTL).
//
// A runtime without spec or template is refused before, by ValidateRuntimeShape.
func ValidateRuntime(rt, old client.Object) field.ErrorList {
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
	var errs field.ErrorList
	_, namespaced := rt.(*trainer.TrainingRuntime)
	if old == nil || !namespaced {
		errs = append(errs, validateAncestors(spec)...)
	}
	errs = append(errs, validateBuildable(spec)...)
	errs = append(errs, knobs.ValidateRuntime(rt.GetAnnotations())...)
	errs = append(errs, validateJobSetTTL(spec, old)...)
	if p := spec.PodGroupPolicy; p != nil && p.Coscheduling != nil && p.Volcano != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podGroupPolicy"),
			"only one of coscheduling and volcano can be configured"))
	}
	return errs
}

// validateJobSetTTL refuses a JobSet TTL in the template, which Kubeflow Trainer plans to refuse
// too (kubeflow/trainer#4052): it deletes the pods and their logs under a TrainJob that is
// meant to stay. A runtime stored with one keeps it through updates that leave it unchanged.
func validateJobSetTTL(spec *trainer.TrainingRuntimeSpec, old client.Object) field.ErrorList {
	ttl := spec.Template.Spec.TTLSecondsAfterFinished
	if ttl == nil {
		return nil
	}
	if old != nil {
		if oldSpec, err := ref.RuntimeSpec(old); err == nil && ptr.Equal(oldSpec.Template.Spec.TTLSecondsAfterFinished, ttl) {
			return nil
		}
	}
	return field.ErrorList{field.Forbidden(field.NewPath("spec", "template", "spec", "ttlSecondsAfterFinished"),
		fmt.Sprintf("set the annotation %s on the runtime or the TrainJob instead: it deletes the TrainJob when its time is up, and %s: All deletes only its JobSet and pods",
			knobs.TTLSecondsAfterFinished, knobs.TTLCleanPods))}
}

// validateAncestors is Kubeflow Trainer's runtime rule, with its paths and messages.
func validateAncestors(spec *trainer.TrainingRuntimeSpec) field.ErrorList {
	var errs field.ErrorList
	jobsPath := field.NewPath("spec", "template", "spec", "replicatedJobs")
	for i, rj := range spec.Template.Spec.ReplicatedJobs {
		ancestor := rj.Template.Labels[trainer.AncestorLabel]
		container, ok := requiredContainer[ancestor]
		if !ok {
			continue
		}
		if rj.Replicas != 1 {
			errs = append(errs, field.Invalid(jobsPath.Index(i).Child("replicas"), rj.Replicas, "always must be 1"))
		}
		pod := &rj.Template.Spec.Template.Spec
		if !slices.ContainsFunc(pod.Containers, func(c corev1.Container) bool { return c.Name == container }) {
			errs = append(errs, field.Invalid(jobsPath.Index(i).Child("template", "spec", "template", "spec", "containers"),
				pod.Containers, fmt.Sprintf("must contain the required container for the ancestor: %s", ancestor)))
		}
	}
	return errs
}

// deprecationPolicyURL explains the runtime deprecation policy.
const deprecationPolicyURL = "https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"

// RuntimeWarnings warns about a deprecated ClusterTrainingRuntime.
func RuntimeWarnings(rt client.Object) admission.Warnings {
	if _, ok := rt.(*trainer.ClusterTrainingRuntime); !ok || rt.GetLabels()[trainer.SupportLabel] != trainer.SupportDeprecated {
		return nil
	}
	return admission.Warnings{fmt.Sprintf("ClusterTrainingRuntime %q is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: %s",
		rt.GetName(), deprecationPolicyURL)}
}

// TrainJobWarnings warns about a TrainJob that references a deprecated ClusterTrainingRuntime.
func TrainJobWarnings(rt client.Object) admission.Warnings {
	if _, ok := rt.(*trainer.ClusterTrainingRuntime); !ok || rt.GetLabels()[trainer.SupportLabel] != trainer.SupportDeprecated {
		return nil
	}
	return admission.Warnings{fmt.Sprintf("Referenced ClusterTrainingRuntime %q is deprecated and will be removed in a future release of Kubeflow Trainer. See runtime deprecation policy: %s",
		rt.GetName(), deprecationPolicyURL)}
}
