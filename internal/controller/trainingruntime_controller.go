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
	"context"
	"errors"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// RuntimeReconciler removes the finalizer that Kubeflow Trainer before v2.3 put on runtimes in
// use. Gantry protects running TrainJobs with their runtime snapshot instead, so a runtime can be
// deleted at any time.
type RuntimeReconciler struct {
	client  client.Client
	newObj  func() client.Object
	kindTag string
}

// NewTrainingRuntimeReconciler handles TrainingRuntimes.
func NewTrainingRuntimeReconciler(c client.Client) (*RuntimeReconciler, error) {
	return newRuntimeReconciler(c, func() client.Object { return &trainer.TrainingRuntime{} }, "trainingruntime_controller")
}

// NewClusterTrainingRuntimeReconciler handles ClusterTrainingRuntimes.
func NewClusterTrainingRuntimeReconciler(c client.Client) (*RuntimeReconciler, error) {
	return newRuntimeReconciler(c, func() client.Object { return &trainer.ClusterTrainingRuntime{} }, "clustertrainingruntime_controller")
}

func newRuntimeReconciler(c client.Client, newObj func() client.Object, name string) (*RuntimeReconciler, error) {
	if c == nil {
		return nil, errors.New("runtime reconciler: nil client")
	}
	return &RuntimeReconciler{client: c, newObj: newObj, kindTag: name}, nil
}

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=list;watch;patch

// Reconcile strips the legacy finalizer.
func (r *RuntimeReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	obj := r.newObj()
	if err := r.client.Get(ctx, req.NamespacedName, obj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !controllerutil.ContainsFinalizer(obj, trainer.ResourceInUseFinalizer) {
		return ctrl.Result{}, nil
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Removing the legacy in-use finalizer")
	// The optimistic lock keeps a finalizer another controller adds meanwhile.
	patch := client.MergeFromWithOptions(obj.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(obj, trainer.ResourceInUseFinalizer)
	return ctrl.Result{}, client.IgnoreNotFound(r.client.Patch(ctx, obj, patch))
}

// SetupWithManager registers the controller.
func (r *RuntimeReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).For(r.newObj()).Named(r.kindTag).Complete(r)
}
