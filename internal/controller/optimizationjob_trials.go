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
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// errCrashAfterTrial is the OptimizationCrashAfterTrial fault's error: the reconcile stops right
// after a trial was created, before the status write, as a crash would.
var errCrashAfterTrial = errors.New("fault injected: stopped after creating a trial")

// listTrials reads the job's trials by index: TrainJobs labelled with its name and controlled
// by it (a TrainJob merely labelled so is not a trial).
func (r *OptimizationJobReconciler) listTrials(ctx context.Context, oj *trainer.OptimizationJob) (map[int]*trainer.TrainJob, error) {
	list := &trainer.TrainJobList{}
	if err := r.client.List(ctx, list, client.InNamespace(oj.Namespace),
		client.MatchingLabels{optimization.JobNameLabel: oj.Name}); err != nil {
		return nil, fmt.Errorf("listing trials: %w", err)
	}
	out := map[int]*trainer.TrainJob{}
	for i := range list.Items {
		tj := &list.Items[i]
		idx, ok := trialIndex(tj)
		if ok && metav1.IsControlledBy(tj, oj) {
			out[idx] = tj
		}
	}
	return out, nil
}

// recordFinished marks each trial that ended since it was last seen with its outcome (the
// OutcomeAnnotation) and queues its event; the mark keeps a restart from reporting it again.
func (r *OptimizationJobReconciler) recordFinished(ctx context.Context, s *optScope) error {
	metric := objectiveMetric(s.oj)
	for _, i := range slices.Sorted(maps.Keys(s.trials)) {
		tj := s.trials[i]
		outcome, _ := trainjob.Outcome(&tj.Status)
		if outcome == "" || tj.Annotations[optimization.OutcomeAnnotation] == string(outcome) {
			continue
		}
		patched := tj.DeepCopy()
		if patched.Annotations == nil {
			patched.Annotations = map[string]string{}
		}
		patched.Annotations[optimization.OutcomeAnnotation] = string(outcome)
		if err := r.client.Patch(ctx, patched, client.MergeFrom(tj)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("recording the outcome of trial %s: %w", tj.Name, err)
		}
		s.trials[i] = patched
		d := trainjob.DeriveState(tj, nil, nil)
		if outcome == trainjob.StateFailed {
			s.event(corev1.EventTypeWarning, optimization.EventTrialFailed, fmt.Sprintf("Trial %s failed: %s", tj.Name, d.Message))
			continue
		}
		msg := fmt.Sprintf("Trial %s completed; it reported no %s", tj.Name, metric)
		if v, ok := optimization.Objective(tj, metric); ok {
			msg = fmt.Sprintf("Trial %s completed with %s=%s", tj.Name, metric, strconv.FormatFloat(v, 'g', -1, 64))
		}
		s.event(corev1.EventTypeNormal, optimization.EventTrialComplete, msg)
	}
	return nil
}

// syncSuspension suspends the unfinished trials (suspend) or resumes those the controller
// suspended. A trial suspended by someone else (Kueue, the template) is left as it is.
func (r *OptimizationJobReconciler) syncSuspension(ctx context.Context, s *optScope, suspend bool) error {
	for _, i := range slices.Sorted(maps.Keys(s.trials)) {
		tj := s.trials[i]
		if trainjob.Finished(&tj.Status) {
			continue
		}
		_, ours := tj.Annotations[optimization.SuspendedByAnnotation]
		patched := tj.DeepCopy()
		switch {
		case suspend && !trainjob.Suspended(tj):
			patched.Spec.Suspend = ptr.To(true)
			if patched.Annotations == nil {
				patched.Annotations = map[string]string{}
			}
			patched.Annotations[optimization.SuspendedByAnnotation] = "true"
		case !suspend && ours:
			patched.Spec.Suspend = ptr.To(false)
			delete(patched.Annotations, optimization.SuspendedByAnnotation)
		default:
			continue
		}
		if err := r.client.Patch(ctx, patched, client.MergeFrom(tj)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("suspending or resuming trial %s: %w", tj.Name, err)
		}
		s.trials[i] = patched
	}
	return nil
}

// createTrials creates the trials of the given indices, in order.
func (r *OptimizationJobReconciler) createTrials(ctx context.Context, s *optScope, indices []int) error {
	for _, i := range indices {
		if s.broken != nil {
			return nil
		}
		if err := r.createTrial(ctx, s, i); err != nil {
			return err
		}
		if crashAfterTrialCreate() {
			return errCrashAfterTrial
		}
	}
	return nil
}

// createTrial creates trial index from the template with its parameter values substituted. Its
// name is fixed by the index, so a creation a restart repeats meets AlreadyExists; the values
// are recorded on it, so nothing reads them but the trial.
func (r *OptimizationJobReconciler) createTrial(ctx context.Context, s *optScope, index int) error {
	oj := s.oj
	values, err := optimization.Assign(&oj.Spec, optimization.Seed(&oj.Spec, oj.UID), index)
	if err != nil {
		s.broken = failed(optimization.ReasonInvalidSpec, err.Error())
		return nil
	}
	spec, err := optimization.Substitute(&oj.Spec.TrainJobTemplate.Spec, values)
	if err != nil {
		s.broken = failed(optimization.ReasonInvalidSpec, err.Error())
		return nil
	}
	tj := newTrial(oj, index, values, spec)
	if err := r.client.Create(ctx, tj); err != nil {
		if apierrors.IsAlreadyExists(err) {
			return r.adoptExisting(ctx, s, index, tj.Name)
		}
		if apierrors.IsInvalid(err) || apierrors.IsForbidden(err) && strings.Contains(err.Error(), "admission webhook") {
			// The schema or the TrainJob webhook (a denial is 403) refuses the trial: so would
			// every retry.
			s.broken = failed(optimization.ReasonInvalidSpec, fmt.Sprintf("trial %s is refused: %v", tj.Name, err))
			return nil
		}
		return fmt.Errorf("creating trial %s: %w", tj.Name, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Created trial", "trainJob", tj.Name, "index", index)
	s.trials[index] = tj
	s.event(corev1.EventTypeNormal, optimization.EventTrialCreated,
		fmt.Sprintf("Created trial %s with %s", tj.Name, formatParameters(values)))
	return nil
}

// adoptExisting handles a trial name already taken: by this job's trial (created by an
// earlier reconcile the cache did not show yet) it counts as created; by anything else the job
// cannot go on.
func (r *OptimizationJobReconciler) adoptExisting(ctx context.Context, s *optScope, index int, name string) error {
	existing := &trainer.TrainJob{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: s.oj.Namespace, Name: name}, existing)
	switch {
	case apierrors.IsNotFound(err):
		// Not in the cache yet: ours, as only trials are created under this name by us; the
		// next reconcile, from its creation event, reads it.
		s.trials[index] = &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: name}}
		return nil
	case err != nil:
		return fmt.Errorf("reading trial %s: %w", name, err)
	case !metav1.IsControlledBy(existing, s.oj):
		s.broken = failed(optimization.ReasonTrialNameTaken,
			fmt.Sprintf("TrainJob %s exists and is not a trial of this OptimizationJob", name))
		return nil
	}
	s.trials[index] = existing
	return nil
}

// newTrial builds trial index: the template's metadata and spec (substituted), named
// "<job>-<index>", labelled with the job and index, annotated with its values, and controlled
// by the job so that deleting the job deletes it.
func newTrial(oj *trainer.OptimizationJob, index int, values []trainer.ParameterAssignment, spec *trainer.TrainJobSpec) *trainer.TrainJob {
	tmpl := &oj.Spec.TrainJobTemplate
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[optimization.JobNameLabel] = oj.Name
	labels[optimization.TrialIndexLabel] = strconv.Itoa(index)
	annotations := maps.Clone(tmpl.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[optimization.ParametersAnnotation] = optimization.EncodeParameters(values)
	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       oj.Namespace,
			Labels:          labels,
			Annotations:     annotations,
			Finalizers:      slices.Clone(tmpl.Finalizers),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))},
		},
		Spec: *spec,
	}
	if randomTrialNames() {
		tj.GenerateName = optimization.TrialName(oj.Name, index) + "-"
	} else {
		tj.Name = optimization.TrialName(oj.Name, index)
	}
	return tj
}
