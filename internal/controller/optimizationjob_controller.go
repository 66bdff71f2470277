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

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// OptimizationJobReconciler runs OptimizationJobs: it creates their trials as TrainJobs, keeps
// them within parallelTrials and numTrials, suspends and resumes them with the job, and writes
// the best trial and the job's conditions (docs/optimization.md).
type OptimizationJobReconciler struct {
	client   client.Client
	recorder record.EventRecorder
}

// NewOptimizationJobReconciler returns the reconciler; c reads through the manager's cache.
func NewOptimizationJobReconciler(c client.Client, recorder record.EventRecorder) (*OptimizationJobReconciler, error) {
	if c == nil || recorder == nil {
		return nil, errors.New("NewOptimizationJobReconciler: nil dependency")
	}
	return &OptimizationJobReconciler{client: c, recorder: recorder}, nil
}

// The OptimizationJob controller reads OptimizationJobs and their trials through the cache,
// creates trials and patches them (suspend, the outcome annotation), and patches the job's
// status. Trials carry a blockOwnerDeletion owner reference: optimizationjobs/finalizers.
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=optimizationjobs,verbs=list;watch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=optimizationjobs/status,verbs=patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=optimizationjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;create;patch

// Reconcile reads the job and its trials, records trials that finished, plans (create, suspend,
// end), acts, and writes the status once; the events follow that write.
func (r *OptimizationJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	oj := &trainer.OptimizationJob{}
	if err := r.client.Get(ctx, req.NamespacedName, oj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("optimizationJob", klog.KObj(oj))
	ctx = ctrl.LoggerInto(ctx, log)
	if !oj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // the garbage collector deletes the trials
	}
	s, err := r.newOptScope(ctx, oj)
	if err != nil {
		return ctrl.Result{}, err
	}
	if err := r.recordFinished(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	best, err := bestTrial(s)
	if err != nil {
		return ctrl.Result{}, err
	}
	p := planOptimization(s, best)
	if err := r.syncSuspension(ctx, s, p.suspend); err != nil {
		return ctrl.Result{}, err
	}
	if err := r.createTrials(ctx, s, p.create); err != nil {
		return ctrl.Result{}, err
	}
	if s.broken != nil && p.terminal == nil {
		p = planOptimization(s, best) // a trial could not be built: end now
	}
	if err := r.patchOptStatus(ctx, s, desiredOptStatus(s, p, best)); err != nil {
		return ctrl.Result{}, err
	}
	r.emitOpt(s)
	return ctrl.Result{}, nil
}

func (r *OptimizationJobReconciler) newOptScope(ctx context.Context, oj *trainer.OptimizationJob) (*optScope, error) {
	k, errs := knobs.ParseOptimization(oj.Annotations)
	if len(errs) > 0 {
		ctrl.LoggerFrom(ctx).Info("Ignoring invalid OptimizationJob annotations", "errors", errs.ToAggregate().Error())
	}
	trials, err := r.listTrials(ctx, oj)
	if err != nil {
		return nil, err
	}
	return &optScope{oj: oj, trials: trials, total: optimization.Total(&oj.Spec), knobs: k}, nil
}

// patchOptStatus writes status with one merge patch, only when it changed.
func (r *OptimizationJobReconciler) patchOptStatus(ctx context.Context, s *optScope, status *trainer.OptimizationJobStatus) error {
	if equality.Semantic.DeepEqual(&s.oj.Status, status) {
		return nil
	}
	patched := s.oj.DeepCopy()
	patched.Status = *status
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(s.oj)); err != nil {
		return err
	}
	if ended := endedCondition(patched); ended != nil && endedCondition(s.oj) == nil {
		eventType, reason := corev1.EventTypeNormal, optimization.EventComplete
		if ended.Type == optimization.ConditionFailed {
			eventType, reason = corev1.EventTypeWarning, optimization.EventFailed
		}
		s.event(eventType, reason, ended.Message)
	}
	return nil
}

func (r *OptimizationJobReconciler) emitOpt(s *optScope) {
	for _, e := range s.events {
		r.recorder.Event(s.oj, e.eventType, e.reason, truncate(e.message))
	}
}

// SetupWithManager registers the controller. The job is reconciled on creation and on an
// annotation change (the suspend knob; its spec is immutable and its status is ours); a trial
// when it is created or deleted, ends, is suspended or resumed, or a finished trial's metrics
// change: not on every progress report of a running trial.
func (r *OptimizationJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).
		For(&trainer.OptimizationJob{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		Owns(&trainer.TrainJob{}, builder.WithPredicates(predicate.Funcs{UpdateFunc: trialChanged})).
		Named("optimizationjob_controller").
		Complete(r)
}

func trialChanged(e event.UpdateEvent) bool {
	o, okOld := e.ObjectOld.(*trainer.TrainJob)
	n, okNew := e.ObjectNew.(*trainer.TrainJob)
	if !okOld || !okNew {
		return true
	}
	oOut, _ := trainjob.Outcome(&o.Status)
	nOut, _ := trainjob.Outcome(&n.Status)
	switch {
	case oOut != nOut, trainjob.Suspended(o) != trainjob.Suspended(n):
		return true
	case nOut != "":
		return !equality.Semantic.DeepEqual(o.Status.TrainerStatus, n.Status.TrainerStatus)
	}
	return false
}
