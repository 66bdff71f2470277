package core

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// requiredContainer is the container each step a TrainJob overrides must have.
var requiredContainer = map[string]string{
	trainer.AncestorTrainer:            "node",
	trainer.AncestorDatasetInitializer: trainer.AncestorDatasetInitializer,
	trainer.AncestorModelInitializer:   trainer.AncestorModelInitializer,
}

// ValidateRuntime checks a TrainingRuntime or ClusterTrainingRuntime beyond its schema: every
// step a TrainJob overrides runs as one Job with the container the TrainJob fills in, and at most
// one gang scheduler is chosen.
func ValidateRuntime(rt client.Object) field.ErrorList {
	spec, err := RuntimeSpec(rt)
	if err != nil {
		return field.ErrorList{field.InternalError(nil, err)}
	}
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
		found := false
		for _, c := range rj.Template.Spec.Template.Spec.Containers {
			found = found || c.Name == container
		}
		if !found {
			errs = append(errs, field.Invalid(jobsPath.Index(i).Child("template", "spec", "template", "spec", "containers"),
				field.OmitValueType{}, fmt.Sprintf("must contain the required container for the ancestor: %s", ancestor)))
		}
	}
	if p := spec.PodGroupPolicy; p != nil && p.Coscheduling != nil && p.Volcano != nil {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "podGroupPolicy"),
			"only one of coscheduling and volcano can be configured"))
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
