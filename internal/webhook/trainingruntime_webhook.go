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
	"encoding/json"

	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-clustertrainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=clustertrainingruntimes,verbs=create;update,versions=v1alpha1,name=validator.clustertrainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainingruntime,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainingruntimes,verbs=create;update,versions=v1alpha1,name=validator.trainingruntime.trainer.kubeflow.org,admissionReviewVersions=v1

// RuntimeValidator validates both runtime kinds on create and update (core.ValidateRuntime says
// which rules apply to which).
type RuntimeValidator[T client.Object] struct{}

var (
	_ admission.Validator[*trainer.TrainingRuntime]        = RuntimeValidator[*trainer.TrainingRuntime]{}
	_ admission.Validator[*trainer.ClusterTrainingRuntime] = RuntimeValidator[*trainer.ClusterTrainingRuntime]{}
)

// ValidateCreate validates a new runtime.
func (RuntimeValidator[T]) ValidateCreate(ctx context.Context, rt T) (admission.Warnings, error) {
	return validateRuntime(ctx, rt, nil)
}

// ValidateUpdate validates a changed runtime.
func (RuntimeValidator[T]) ValidateUpdate(ctx context.Context, old, rt T) (admission.Warnings, error) {
	return validateRuntime(ctx, rt, old)
}

// ValidateDelete allows every deletion: running TrainJobs keep their snapshot.
func (RuntimeValidator[T]) ValidateDelete(context.Context, T) (admission.Warnings, error) {
	return nil, nil
}

func validateRuntime(ctx context.Context, rt, old client.Object) (admission.Warnings, error) {
	// Whether spec and template are there at all only the request's JSON says; the typed runtime
	// has an empty template either way.
	if req, err := admission.RequestFromContext(ctx); err == nil && len(req.Object.Raw) > 0 {
		shape, err := core.RuntimeShapeOf(req.Object.Raw)
		if err != nil {
			return nil, err
		}
		if errs := core.ValidateRuntimeShape(shape); len(errs) > 0 {
			return nil, errs.ToAggregate()
		}
	}
	var warnings admission.Warnings
	if old == nil {
		// Kubeflow Trainer warns when a deprecated runtime is created, not on every update.
		warnings = core.RuntimeWarnings(rt)
	}
	if errs := core.ValidateRuntime(rt, old); len(errs) > 0 {
		return warnings, errs.ToAggregate()
	}
	return warnings, nil
}

func decodeInto(raw []byte, obj any) error {
	return json.Unmarshal(raw, obj)
}
