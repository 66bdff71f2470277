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

	"k8s.io/apimachinery/pkg/api/equality"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// unfinishedTrainJobs lists, from the cache, the TrainJobs this controller still builds.
func (r *TrainJobReconciler) unfinishedTrainJobs(ctx context.Context, opts ...client.ListOption) []reconcile.Request {
	list := &trainer.TrainJobList{}
	if err := r.client.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing TrainJobs to rebuild after a change of the status server CA")
		return nil
	}
	reqs := make([]reconcile.Request, 0, len(list.Items))
	for i := range list.Items {
		tj := &list.Items[i]
		if trainjob.Finished(&tj.Status) || !trainjob.ManagedByGantry(tj) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(tj)})
	}
	return reqs
}

// notOnlyTrainerStatus drops TrainJob updates that change nothing but status.trainerStatus (and
// the metadata every write changes): the status server writes one per progress report, and the
// controller builds nothing from it.
func notOnlyTrainerStatus() predicate.TypedPredicate[client.Object] {
	return predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		oldTJ, okOld := e.ObjectOld.(*trainer.TrainJob)
		newTJ, okNew := e.ObjectNew.(*trainer.TrainJob)
		if !okOld || !okNew || equality.Semantic.DeepEqual(oldTJ.Status.TrainerStatus, newTJ.Status.TrainerStatus) {
			return true
		}
		return !equality.Semantic.DeepEqual(withoutProgress(oldTJ), withoutProgress(newTJ))
	}}
}

func withoutProgress(tj *trainer.TrainJob) *trainer.TrainJob {
	c := tj.DeepCopy()
	c.Status.TrainerStatus = nil
	c.ResourceVersion = ""
	c.ManagedFields = nil
	return c
}
