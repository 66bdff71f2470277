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
	"time"

	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// phase is one named step of a TrainJob reconcile. It computes into the scope (the status, the
// JobSet read) and returns what the reconcile must do about it besides.
type phase struct {
	name string
	run  func(*TrainJobReconciler, context.Context, *scope) phaseResult
}

// phaseResult is what a phase decided; runPhases merges the results of every phase once.
type phaseResult struct {
	// requeueAfter asks to look at the TrainJob again after this delay; 0 is no need.
	requeueAfter time.Duration
	// err stops the reconcile at this phase: nothing can be said about the status (before the
	// write) or the next phases depend on this one (after it).
	err error
	// retryErr is retried after the status says what failed (a build error, Scaled=False).
	retryErr error
	// skipToWrite says the status is decided: the other phases before the write do not run.
	skipToWrite bool
	// events are emitted once the status is written (see queuedEvent).
	events []queuedEvent
}

// beforeStatusWrite computes the status, in this order: the JobSet is read before it is built,
// the build's error and disabled features survive the mirror of the JobSet's status, and the
// conditions that end a TrainJob (JobSet deleted, deadline) are decided on the mirrored status.
var beforeStatusWrite = []phase{
	{"runtime-kind", (*TrainJobReconciler).checkRuntimeKind},
	{"read-jobset", (*TrainJobReconciler).readJobSet},
	{"build", (*TrainJobReconciler).buildUnfinished},
	{"mirror-status", (*TrainJobReconciler).mirrorStatus},
	{"suspended", (*TrainJobReconciler).suspendedCondition},
	{"scale", (*TrainJobReconciler).scale},
	{"jobset-deleted", (*TrainJobReconciler).endIfJobSetDeleted},
	{"deadline", (*TrainJobReconciler).checkDeadline},
}

// afterStatusWrite acts on what the cache holds once the status is written: only a TrainJob the
// cache already holds as finished is released or cleaned up, since nothing can build it again.
var afterStatusWrite = []phase{
	{"observe-finish", (*TrainJobReconciler).observeFinish},
	{"after-finish", (*TrainJobReconciler).afterFinish},
	{"ttl", (*TrainJobReconciler).cleanUp},
}

// runPhases runs the phases before the status write, writes the status once, then runs the
// phases after it. Their results merge once:
//   - an err stops the reconcile at its phase and is returned alone, named by its phase; before
//     the write, the status is not written and no event is emitted;
//   - retry errors, in phase order, are returned once every phase has run, the status written
//     first; a failed write returns them joined with its own error;
//   - the events of the phases before the write are emitted in phase order once it succeeded, a
//     later phase's as soon as it ran;
//   - with no error, the reconcile comes back at the earliest requeueAfter of any phase.
func (r *TrainJobReconciler) runPhases(ctx context.Context, s *scope, before, after []phase) (ctrl.Result, error) {
	var retry []error
	var events []queuedEvent
	var requeue time.Duration
	run := func(p phase) (phaseResult, bool) {
		if log := ctrl.LoggerFrom(ctx).V(5); log.Enabled() {
			log.Info("Running reconcile phase", "phase", p.name)
		}
		res := p.run(r, ctx, s)
		requeue = sooner(requeue, res.requeueAfter)
		if res.retryErr != nil {
			retry = append(retry, fmt.Errorf("reconcile phase %s: %w", p.name, res.retryErr))
		}
		if res.err != nil {
			res.err = fmt.Errorf("reconcile phase %s: %w", p.name, res.err)
			return res, false
		}
		return res, true
	}
	for _, p := range before {
		res, ok := run(p)
		if !ok {
			return ctrl.Result{}, res.err
		}
		events = append(events, res.events...)
		if res.skipToWrite {
			break
		}
	}
	if err := r.patchStatus(ctx, s.tj, s.status); err != nil {
		metrics.ReconcileErrors.WithLabelValues(metrics.ReasonStatusFailed).Inc()
		return ctrl.Result{}, errors.Join(append(retry, err)...)
	}
	r.emit(s, events)
	for _, p := range after {
		res, ok := run(p)
		r.emit(s, res.events)
		if !ok {
			return ctrl.Result{}, res.err
		}
	}
	if len(retry) > 0 {
		return ctrl.Result{}, errors.Join(retry...)
	}
	return ctrl.Result{RequeueAfter: requeue}, nil
}

// sooner is the earlier of two requeue delays, 0 meaning none.
func sooner(a, b time.Duration) time.Duration {
	if a == 0 || b != 0 && b < a {
		return b
	}
	return a
}

// checkRuntimeKind fails a TrainJob whose runtimeRef names no runtime kind; nothing else is
// computed for it.
func (r *TrainJobReconciler) checkRuntimeKind(_ context.Context, s *scope) phaseResult {
	if err := ref.CheckSupported(s.tj); err != nil {
		setUnsupportedRuntime(s.status, s.tj, err.Error(), s.now)
		return phaseResult{skipToWrite: true}
	}
	return phaseResult{}
}

// readJobSet reads the TrainJob's JobSet from the cache (jobSet).
func (r *TrainJobReconciler) readJobSet(ctx context.Context, s *scope) phaseResult {
	js, err := r.jobSet(ctx, s.tj)
	s.jobSet = js
	return phaseResult{err: err}
}

// buildUnfinished builds the objects of a TrainJob the cache holds as unfinished (buildOrEnd).
func (r *TrainJobReconciler) buildUnfinished(ctx context.Context, s *scope) phaseResult {
	if trainjob.Finished(&s.tj.Status) {
		return phaseResult{}
	}
	return r.buildOrEnd(ctx, s)
}

// mirrorStatus sets the status the runtime computes from the JobSet, keeping what the build
// found and the terminal conditions the TrainJob already had.
func (r *TrainJobReconciler) mirrorStatus(_ context.Context, s *scope) phaseResult {
	mirrored, err := r.runtime.TrainJobStatus(s.tj, s.jobSet)
	if err != nil {
		return phaseResult{err: err}
	}
	buildError, disabled := s.status.BuildError, s.status.DisabledFeatures
	*s.status = *mirrored
	s.status.BuildError, s.status.DisabledFeatures = buildError, disabled
	keepTerminalConditions(s.status, &s.tj.Status)
	return phaseResult{}
}

func (r *TrainJobReconciler) suspendedCondition(_ context.Context, s *scope) phaseResult {
	setSuspendedCondition(s.status, s.tj, s.now)
	return phaseResult{}
}

func (r *TrainJobReconciler) endIfJobSetDeleted(_ context.Context, s *scope) phaseResult {
	if s.jobSetDeleted() {
		setJobSetDeleted(s.status, s.tj, s.now)
	}
	return phaseResult{}
}

// checkDeadline fails a TrainJob past its activeDeadlineSeconds, or looks again when it ends.
func (r *TrainJobReconciler) checkDeadline(_ context.Context, s *scope) phaseResult {
	exceeded, requeue := deadlineExceeded(s.tj, s.status, s.now.Time)
	if exceeded {
		setDeadlineExceeded(s.status, s.tj, s.now)
	}
	return phaseResult{requeueAfter: requeue}
}

// observeFinish records the duration of a TrainJob this reconcile finished, once its status says so.
func (r *TrainJobReconciler) observeFinish(_ context.Context, s *scope) phaseResult {
	if !trainjob.Finished(&s.tj.Status) && trainjob.Finished(s.status) {
		metrics.ObserveFinished(s.tj, s.status, s.now.Time)
	}
	return phaseResult{}
}
