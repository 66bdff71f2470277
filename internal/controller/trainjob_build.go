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
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Event reasons on TrainJobs.
const (
	ReasonResourcesCreationFailed = "TrainJobResourcesCreationFailed"
	// disabledSuffix follows a feature's name in the reason of the event that says it is off,
	// e.g. ProgressReportingDisabled.
	disabledSuffix = "Disabled"
)

// buildOrEnd builds the objects of an unfinished TrainJob, unless its JobSet is going away or
// went away while the TrainJob ran: a JobSet is never made again for a TrainJob that had one,
// except while the TrainJob is suspended (the re-admission path), where it runs nothing.
func (r *TrainJobReconciler) buildOrEnd(ctx context.Context, s *scope) phaseResult {
	if s.jobSet != nil && !s.jobSet.DeletionTimestamp.IsZero() {
		if trainjob.Suspended(s.tj) {
			// Let it go; the next reconcile builds a new, suspended one.
			return phaseResult{err: r.removeOutcomeFinalizer(ctx, s.jobSet)}
		}
		return phaseResult{}
	}
	injected, err := r.injectRecreateJobSet(ctx, s)
	if err != nil {
		return phaseResult{err: err}
	}
	if s.jobSet == nil && hadJobSet(s.tj) && !injected {
		gone, err := r.confirmJobSetGone(ctx, s)
		if err != nil || gone {
			return phaseResult{err: err}
		}
	}
	res := r.build(ctx, s)
	if err := r.addOutcomeFinalizer(ctx, s.jobSet); err != nil {
		return phaseResult{err: err}
	}
	return res
}

// endIfVanished handles a build whose update of the JobSet this reconcile read found it deleted
// (the applier refused to create it again): from here on it is a TrainJob without its JobSet
// (buildOrEnd then has no JobSet to add the outcome finalizer to, unless the re-read finds one).
// One that had reported is confirmed gone around the cache and fails (JobSetDeleted) in this very
// reconcile; for one that never reported, the deletion's watch event, which the cache has seen or
// is about to, reconciles it again and the build makes the JobSet anew, as for any such TrainJob.
func (r *TrainJobReconciler) endIfVanished(ctx context.Context, s *scope) phaseResult {
	s.jobSet = nil
	if !hadJobSet(s.tj) {
		return phaseResult{}
	}
	_, err := r.confirmJobSetGone(ctx, s)
	return phaseResult{err: err}
}

// hadJobSet tells from the TrainJob's status that a JobSet existed and reported: its replicated
// job counts are mirrored only from a JobSet.
func hadJobSet(tj *trainer.TrainJob) bool {
	return len(tj.Status.JobsStatus) > 0 && !trainjob.Suspended(tj)
}

// confirmJobSetGone re-reads, around the cache, a TrainJob whose JobSet the cache does not have
// although it had one: the cache may be behind (the TrainJob finished, or the JobSet was just
// made), and building on a stale answer would run the training again. It reports whether the
// JobSet is really gone, and then ends the TrainJob.
func (r *TrainJobReconciler) confirmJobSetGone(ctx context.Context, s *scope) (bool, error) {
	fresh := &trainer.TrainJob{}
	if err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(s.tj), fresh); err != nil {
		return false, fmt.Errorf("re-reading the TrainJob: %w", err)
	}
	if trainjob.Finished(&fresh.Status) || fresh.UID != s.tj.UID {
		return true, nil
	}
	js := &jobsetv1alpha2.JobSet{}
	err := r.apiReader.Get(ctx, client.ObjectKeyFromObject(s.tj), js)
	if err == nil {
		s.jobSet = js
		return false, nil
	}
	if !apierrors.IsNotFound(err) {
		return false, fmt.Errorf("re-reading the JobSet: %w", err)
	}
	s.jobSetGone = true
	return true, nil
}

// build resolves the runtime (the snapshot first), reads what the cluster provides and writes
// every object. The status says how it went; a failure is retried after the status write.
func (r *TrainJobReconciler) build(ctx context.Context, s *scope) phaseResult {
	ctrl.LoggerFrom(ctx).V(2).Info("Building TrainJob objects")
	disabled, err := r.buildObjects(ctx, s)
	if gone, ok := errors.AsType[*apply.GoneError](err); ok && gone.Kind == "JobSet" {
		// Not a build error: the JobSet went while it was updated.
		ctrl.LoggerFrom(ctx).V(2).Info("JobSet deleted while the build updated it", "jobSet", gone.Name)
		return r.endIfVanished(ctx, s)
	}
	setBuildError(s.status, s.tj.Status.BuildError, err, s.now)
	var res phaseResult
	if err == nil {
		setDisabledFeatures(s, &res, disabled)
		return res
	}
	s.buildFailed = true
	metrics.ReconcileErrors.WithLabelValues(reasonOf(err)).Inc()
	res.warn(ReasonResourcesCreationFailed, "TrainJob resources reconciliation failed: "+err.Error())
	res.retryErr = err
	if _, ok := errors.AsType[*terminalError](err); ok {
		// Nothing but a change of the TrainJob (which reconciles it again) can fix it.
		res.retryErr = reconcile.TerminalError(err)
	}
	return res
}

// buildObjects writes the TrainJob's objects and returns the optional features the build left out.
func (r *TrainJobReconciler) buildObjects(ctx context.Context, s *scope) ([]runtime.DisabledFeature, error) {
	tj := s.tj
	rt, source, err := ref.ResolveRuntime(ctx, r.client, tj, ref.SnapshotThenLive)
	if err != nil {
		if ref.IsRuntimeNotFound(err) {
			return nil, withReason(metrics.ReasonRuntimeNotFound, err)
		}
		if errors.Is(err, ref.ErrInvalidSnapshot) {
			return nil, &terminalError{err}
		}
		return nil, err
	}
	obs, err := r.observe(ctx, tj, rt)
	if err != nil {
		return nil, err
	}
	build, err := r.runtime.NewObjects(ctx, tj, rt, obs)
	if err != nil {
		err = withReason(metrics.ReasonBuildFailed, fmt.Errorf("building objects: %w", err))
		if source == ref.FromSnapshot {
			// Every input is frozen: the same build fails the same way until the TrainJob changes.
			return nil, &terminalError{err}
		}
		return nil, err
	}
	// Shared objects (the namespace's CA ConfigMap) were published by observe.
	build.Objects = slices.DeleteFunc(build.Objects, func(d apply.Desired) bool { return d.Mode == apply.Shared })
	asControllerWrites(build.Objects, s.jobSet)
	res, err := r.applier.Apply(ctx, tj, trainjob.Suspended(tj), build.Objects)
	for _, o := range res.Created {
		if _, isJobSet := o.(*jobsetv1alpha2.JobSet); isJobSet {
			metrics.JobSetCreationSeconds.Observe(r.clock.Since(tj.CreationTimestamp.Time).Seconds())
		}
	}
	if err != nil {
		err = withReason(metrics.ReasonApplyFailed, err)
		if errors.Is(err, ref.ErrInvalidSnapshot) {
			// A snapshot someone else created (apply's Accept): told once, not retried.
			return nil, &terminalError{err}
		}
		return nil, err
	}
	return build.Disabled, nil
}

// observe reads what the build needs from the cluster: the status server's CA when the
// TrainJobStatus plugin runs (from a cache of that one Secret; when it is missing, progress
// reporting is left out and the build says why), and what the cluster will add to the pods for
// runtimes that size a PodGroup from their requests; other runtimes need none of it.
func (r *TrainJobReconciler) observe(ctx context.Context, tj *trainer.TrainJob, rt client.Object) (*runtime.Observed, error) {
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return nil, err
	}
	obs := &runtime.Observed{}
	if r.ca != nil {
		ca, err := r.ca.CA(ctx)
		switch {
		case err == nil:
			problem, err := r.publisher.Publish(ctx, tj.Namespace, ca)
			if err != nil {
				return nil, err
			}
			if problem == "" {
				obs.StatusServerCA = ca
			}
			obs.StatusServerCAProblem = problem
		case errors.Is(err, cert.ErrCAMissing):
			obs.StatusServerCAProblem = err.Error()
		default:
			return nil, fmt.Errorf("reading the status server CA: %w", err)
		}
	}
	if spec.PodGroupPolicy == nil {
		return obs, nil
	}
	limitRanges := &corev1.LimitRangeList{}
	if err := r.client.List(ctx, limitRanges, client.InNamespace(tj.Namespace)); err != nil {
		return nil, fmt.Errorf("listing LimitRanges: %w", err)
	}
	obs.LimitRanges = limitRanges.Items
	if obs.RuntimeClasses, err = r.runtimeClasses(ctx, core.RuntimeClassNames(spec)); err != nil {
		return nil, err
	}
	return obs, nil
}

// runtimeClasses reads the RuntimeClasses named; a missing one is left out (the pods will be
// refused at creation; there is nothing to add meanwhile).
func (r *TrainJobReconciler) runtimeClasses(ctx context.Context, names []string) (map[string]*nodev1.RuntimeClass, error) {
	classes := map[string]*nodev1.RuntimeClass{}
	for _, name := range names {
		rc := &nodev1.RuntimeClass{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, rc); err != nil {
			if apierrors.IsNotFound(err) {
				continue
			}
			return nil, fmt.Errorf("reading RuntimeClass %q: %w", name, err)
		}
		classes[name] = rc
	}
	return classes, nil
}

// terminalError marks a build error that retrying cannot fix.
type terminalError struct{ err error }

func (e *terminalError) Error() string { return e.err.Error() }
func (e *terminalError) Unwrap() error { return e.err }

// reasonError tags an error with its metrics reason.
type reasonError struct {
	reason string
	err    error
}

func (e *reasonError) Error() string { return e.err.Error() }
func (e *reasonError) Unwrap() error { return e.err }

func withReason(reason string, err error) error {
	if err == nil {
		return nil
	}
	return &reasonError{reason: reason, err: err}
}

func reasonOf(err error) string {
	if re, ok := errors.AsType[*reasonError](err); ok {
		return re.reason
	}
	return metrics.ReasonBuildFailed
}
