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
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// OutcomeFinalizer is on every JobSet Gantry creates, until the TrainJob has recorded how the
// JobSet ended. A JobSet deleted before that (JobSet's ttlSecondsAfterFinished, by hand, or while
// the manager is down for longer than the TTL) stays, with its final status, until Gantry has
// read it: the outcome is never lost, and the training is never started again for lack of it.
// It works as the Job controller's pod tracking finalizer does for pods.
const OutcomeFinalizer = "trainjob.gantry.dev/outcome"

// ReasonJobSetDeleted ends a TrainJob whose JobSet was deleted before it finished.
const ReasonJobSetDeleted = "JobSetDeleted"

// jobSet reads the TrainJob's JobSet from the cache; nil when there is none, or when the one of
// that name belongs to another object.
func (r *TrainJobReconciler) jobSet(ctx context.Context, tj *trainer.TrainJob) (*jobsetv1alpha2.JobSet, error) {
	js := &jobsetv1alpha2.JobSet{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, fmt.Errorf("reading the JobSet: %w", err)
	}
	if !metav1.IsControlledBy(js, tj) {
		// The build refuses to adopt it (apply.NotOwnedError); its status is not this TrainJob's.
		return nil, nil
	}
	return js, nil
}

// asControllerWrites prepares the JobSet among objs as only the controller writes it, not as
// `gantry render` prints it: with OutcomeFinalizer, and, when this reconcile read one (read), as an
// update of that very JobSet. The applier's own read of the cache comes later and may already
// miss a JobSet deleted meanwhile; it must then fail, not create another and run the training again.
func asControllerWrites(objs []apply.Desired, read *jobsetv1alpha2.JobSet) {
	for i := range objs {
		if _, ok := objs[i].Object.(*jobsetv1alpha2.JobSet); !ok {
			continue
		}
		controllerutil.AddFinalizer(objs[i].Object, OutcomeFinalizer)
		if read != nil {
			objs[i].ExistingUID = read.UID
		}
	}
}

// jobSetDeleted reports whether the TrainJob's JobSet is gone, or going, while it ran: deleted
// before it finished, with the TrainJob not suspended.
func (s *scope) jobSetDeleted() bool {
	if trainjob.Finished(s.status) || s.tj.Spec.Suspend != nil && *s.tj.Spec.Suspend {
		return false
	}
	if s.jobSetGone {
		return true
	}
	return s.jobSet != nil && !s.jobSet.DeletionTimestamp.IsZero() && !cached.Finished(s.jobSet)
}

// afterFinish runs once the status is written. For a TrainJob the cache already holds as finished
// (so every later reconcile reads it finished too, and nothing can build it again), the JobSet's
// finalizer is released; a JobSet past the TrainJob's deadline is deleted first.
func (r *TrainJobReconciler) afterFinish(ctx context.Context, s *scope) phaseResult {
	if !trainjob.Finished(&s.tj.Status) || s.jobSet == nil {
		return phaseResult{}
	}
	r.applier.Forget(s.tj)
	if deadlineFailed(&s.tj.Status) && s.jobSet.DeletionTimestamp.IsZero() {
		// Deleted by name, not only when the cache has it: the JobSet this very reconcile applied
		// may not be in the cache yet, and a failed TrainJob is never visited again.
		if err := r.client.Delete(ctx, s.jobSet, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return phaseResult{err: fmt.Errorf("deleting the JobSet of a TrainJob past its deadline: %w", err)}
		}
	}
	return phaseResult{err: r.removeOutcomeFinalizer(ctx, s.jobSet)}
}

// releaseJobSet lets the JobSet of a TrainJob being deleted go with it.
func (r *TrainJobReconciler) releaseJobSet(ctx context.Context, tj *trainer.TrainJob) error {
	js, err := r.jobSet(ctx, tj)
	if err != nil || js == nil {
		return err
	}
	r.applier.Forget(tj)
	return r.removeOutcomeFinalizer(ctx, js)
}

// releaseOrphanJobSet lets a JobSet go whose TrainJob is gone (deleted with background
// propagation: the garbage collector then deletes the JobSet).
func (r *TrainJobReconciler) releaseOrphanJobSet(ctx context.Context, key types.NamespacedName) error {
	js := &jobsetv1alpha2.JobSet{}
	if err := r.client.Get(ctx, key, js); err != nil {
		return client.IgnoreNotFound(err)
	}
	owner := metav1.GetControllerOf(js)
	if js.DeletionTimestamp.IsZero() || owner == nil || owner.Kind != trainer.TrainJobKind {
		return nil
	}
	return r.removeOutcomeFinalizer(ctx, js)
}

// addOutcomeFinalizer adds OutcomeFinalizer to a running JobSet that lacks it: one Gantry took
// over (built by Kubeflow Trainer or a Gantry before the finalizer), which the build never
// rewrites while it runs. Without it, a JobSet that ends and is deleted while the manager is down
// leaves nothing to tell how it ended, and the TrainJob would be recorded as Failed.
func (r *TrainJobReconciler) addOutcomeFinalizer(ctx context.Context, js *jobsetv1alpha2.JobSet) error {
	if js == nil || !js.DeletionTimestamp.IsZero() || cached.Finished(js) || controllerutil.ContainsFinalizer(js, OutcomeFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(js.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.AddFinalizer(js, OutcomeFinalizer)
	if err := r.client.Patch(ctx, js, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("adding the outcome finalizer to the JobSet %s: %w", js.Name, err)
	}
	return nil
}

// removeOutcomeFinalizer removes OutcomeFinalizer from js, keeping any other finalizer (the
// optimistic lock makes a concurrent change retry instead of being overwritten).
func (r *TrainJobReconciler) removeOutcomeFinalizer(ctx context.Context, js *jobsetv1alpha2.JobSet) error {
	if !controllerutil.ContainsFinalizer(js, OutcomeFinalizer) {
		return nil
	}
	patch := client.MergeFromWithOptions(js.DeepCopy(), client.MergeFromWithOptimisticLock{})
	controllerutil.RemoveFinalizer(js, OutcomeFinalizer)
	if err := r.client.Patch(ctx, js, patch); client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("releasing the JobSet %s: %w", js.Name, err)
	}
	return nil
}
