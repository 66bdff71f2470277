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
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Event reasons of the clean-up after finish.
const (
	ReasonTTLExpired     = "TTLExpired"
	ReasonPodsCleanedUp  = "PodsCleanedUp"
	minTTLRequeue        = time.Second
	ttlDeletePropagation = metav1.DeletePropagationForeground
)

// reconcileDispatched is all Gantry does for a TrainJob Kueue's MultiKueue runs on a worker
// (spec.managedBy kueue.x-k8s.io/multikueue, on the manager cluster): it builds nothing, and
// Kueue copies the worker's status here. Once that status says finished, the TrainJob's TTL is
// applied here, where the user submitted it, as Kubernetes' TTL controller deletes a finished
// batch Job whoever manages it; the worker's copy is Kueue's to delete (cleanUp).
func (r *TrainJobReconciler) reconcileDispatched(ctx context.Context, tj *trainer.TrainJob) (ctrl.Result, error) {
	// Another manager's job (not MultiKueue's) is that manager's to clean up.
	if !trainjob.DispatchedByMultiKueue(tj) || !tj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	s := &scope{tj: tj, status: tj.Status.DeepCopy(), now: metav1.NewTime(r.clock.Now())}
	res := r.cleanUp(ctx, s)
	r.emit(s, res.events)
	return ctrl.Result{RequeueAfter: res.requeueAfter}, res.err
}

// cleanUp applies the TTL knobs to a TrainJob the cache already holds as finished (so nothing
// can build it again): clean-pods deletes its JobSet, and at the end of its TTL the TrainJob is
// deleted, with everything it owns. The deadline is computed from the terminal condition each
// time, never kept in memory, so a restart finds every deadline again; the result says when to
// look again.
func (r *TrainJobReconciler) cleanUp(ctx context.Context, s *scope) phaseResult {
	_, finished := trainjob.Outcome(&s.tj.Status)
	if finished == nil {
		return phaseResult{}
	}
	finishedAt := &finished.Time
	eff, err := r.knobs(ctx, s)
	if err != nil {
		return phaseResult{err: err}
	}
	ttl, errs := knobs.ParseTTL(eff)
	if len(errs) > 0 {
		// Only when admission was bypassed; the webhook refuses these values.
		ctrl.LoggerFrom(ctx).V(2).Info("Ignoring invalid TTL annotations", "errors", errs.ToAggregate().Error())
	}
	var res phaseResult
	if res.err = r.cleanPods(ctx, s, &res, ttl.CleanPods); res.err != nil || ttl.After == nil {
		return res
	}
	if trainjob.MultiKueueWorkerCopy(s.tj) {
		// MultiKueue deletes its copy once it has copied the outcome to the manager; deleted
		// before, the job is gone from the manager's view and Kueue runs it again (with a TTL
		// of 0, over and over). The TTL acts on the manager's TrainJob (reconcileDispatched).
		return res
	}
	if left := finishedAt.Add(*ttl.After).Sub(r.clock.Now()); left > 0 {
		res.requeueAfter = max(left, minTTLRequeue)
		return res
	}
	res.requeueAfter, res.err = r.deleteExpired(ctx, s.tj, &res, *finishedAt, *ttl.After)
	return res
}

// cleanPods deletes the JobSet of a finished TrainJob when clean-pods asks: always for All, for
// Running only while pods of it still run. The TrainJob keeps its status.
func (r *TrainJobReconciler) cleanPods(ctx context.Context, s *scope, res *phaseResult, policy knobs.CleanPods) error {
	js := s.jobSet
	if js == nil || !js.DeletionTimestamp.IsZero() || policy == knobs.CleanNone ||
		policy == knobs.CleanRunning && !cached.Active(js) {
		return nil
	}
	err := r.client.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground),
		client.Preconditions{UID: &js.UID})
	if client.IgnoreNotFound(err) != nil {
		return fmt.Errorf("deleting the JobSet of a finished TrainJob (%s: %s): %w", knobs.TTLCleanPods, policy, err)
	}
	if err == nil {
		res.event(corev1.EventTypeNormal, ReasonPodsCleanedUp, fmt.Sprintf("Deleted JobSet %s and its pods (%s: %s)", js.Name, knobs.TTLCleanPods, policy))
	}
	return nil
}

// deleteExpired deletes a TrainJob whose TTL ended. The preconditions make it delete only the
// TrainJob this decision was made on: a TTL raised meanwhile, or a new TrainJob of that name,
// makes it fail and the next reconcile decide again.
func (r *TrainJobReconciler) deleteExpired(ctx context.Context, tj *trainer.TrainJob, res *phaseResult, finishedAt time.Time, ttl time.Duration) (time.Duration, error) {
	res.event(corev1.EventTypeNormal, ReasonTTLExpired, fmt.Sprintf("TrainJob finished at %s; its TTL of %s ended: deleting it",
		finishedAt.UTC().Format(time.RFC3339), ttl))
	err := r.client.Delete(ctx, tj, client.PropagationPolicy(ttlDeletePropagation),
		client.Preconditions{UID: &tj.UID, ResourceVersion: &tj.ResourceVersion})
	switch {
	case err == nil:
		metrics.TTLDeletions.Inc()
		ctrl.LoggerFrom(ctx).V(2).Info("Deleted TrainJob at the end of its TTL", "ttl", ttl)
		return 0, nil
	case apierrors.IsNotFound(err):
		return 0, nil
	case apierrors.IsConflict(err):
		// Changed since the cache read it: decide again on the new version.
		return minTTLRequeue, nil
	default:
		return 0, fmt.Errorf("deleting the TrainJob at the end of its TTL: %w", err)
	}
}

// knobs are the TrainJob's effective knobs, its own over its runtime's defaults, read once per
// reconcile (the TTL and the scale both need them).
func (r *TrainJobReconciler) knobs(ctx context.Context, s *scope) (map[string]string, error) {
	if s.knobs == nil {
		defaults, found, err := r.knobDefaults(ctx, s.tj)
		if err != nil {
			return nil, err
		}
		s.knobs, s.noSnapshot = knobs.Effective(s.tj.Annotations, defaults), !found
	}
	return s.knobs, nil
}

// knobDefaults are the runtime's knobs the TrainJob was built with, kept in the snapshot Gantry
// took when it built it (from the cache). A TrainJob without one gets none: one Gantry never
// built (finished under Kubeflow Trainer before the switch) must not be deleted by a TTL its
// runtime gained later, and a live runtime's annotations are not what the job ran with. found
// is false when the cache holds no snapshot.
func (r *TrainJobReconciler) knobDefaults(ctx context.Context, tj *trainer.TrainJob) (defaults map[string]string, found bool, err error) {
	cm := &corev1.ConfigMap{}
	err = r.client.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: ref.SnapshotName(tj)}, cm)
	switch {
	case err == nil:
		return ref.SnapshotKnobs(cm, tj), true, nil
	case apierrors.IsNotFound(err):
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("reading the runtime snapshot: %w", err)
	}
}
