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
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// Setup registers every webhook with the manager's webhook server.
func Setup(mgr ctrl.Manager, rt *core.Runtime, clk clock.PassiveClock) error {
	if rt == nil || clk == nil {
		return errNilDependency
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.TrainJob{}).
		WithDefaulter(&TrainJobDefaulter{clock: clk}).
		WithValidator(&TrainJobValidator{client: mgr.GetClient(), apiReader: mgr.GetAPIReader(), runtime: rt}).
		Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.TrainingRuntime{}).
		WithValidator(RuntimeValidator[*trainer.TrainingRuntime]{}).Complete(); err != nil {
		return err
	}
	if err := ctrl.NewWebhookManagedBy(mgr, &trainer.OptimizationJob{}).
		WithValidator(OptimizationJobValidator{}).Complete(); err != nil {
		return err
	}
	return ctrl.NewWebhookManagedBy(mgr, &trainer.ClusterTrainingRuntime{}).
		WithValidator(RuntimeValidator[*trainer.ClusterTrainingRuntime]{}).Complete()
}
