// Package controller holds the TrainJob and runtime reconcilers.
package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// Event reasons and actions on TrainJobs.
const (
	ReasonResourcesCreationFailed = "TrainJobResourcesCreationFailed"
	actionReconciling             = "Reconciling"
	maxEventMessage               = 950
)

// TrainJobReconciler turns TrainJobs into JobSets and reports their progress.
type TrainJobReconciler struct {
	client   client.Client
	runtime  *core.Runtime
	recorder record.EventRecorder
	clock    clock.PassiveClock
	// ca is where builds read the status server's CA; nil when the TrainJobStatus gate is off.
	ca *cert.CABundle
}

// NewTrainJobReconciler returns a reconciler; every dependency is required.
func NewTrainJobReconciler(c client.Client, rt *core.Runtime, recorder record.EventRecorder, clk clock.PassiveClock) (*TrainJobReconciler, error) {
	if c == nil || rt == nil || recorder == nil || clk == nil {
		return nil, errors.New("NewTrainJobReconciler: nil dependency")
	}
	return &TrainJobReconciler{client: c, runtime: rt, recorder: recorder, clock: clk}, nil
}

// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=get;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/finalizers,verbs=get;update;patch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get;list;watch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;create;update;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps;secrets,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=events,verbs=create;watch;update;patch
// +kubebuilder:rbac:groups=events.k8s.io,resources=events,verbs=create;watch;update;patch
// +kubebuilder:rbac:groups=scheduling.x-k8s.io;scheduling.volcano.sh,resources=podgroups,verbs=get;list;watch;create;update;patch
// +kubebuilder:rbac:groups="",resources=limitranges,verbs=get;list;watch
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=get;list;watch

// Reconcile builds the TrainJob's objects while it is unfinished and writes its status.
func (r *TrainJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tj := &trainer.TrainJob{}
	if err := r.client.Get(ctx, req.NamespacedName, tj); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("trainJob", klog.KObj(tj))
	ctx = ctrl.LoggerInto(ctx, log)
	if ptr.Deref(tj.Spec.ManagedBy, trainer.ManagedByTrainJobController) != trainer.ManagedByTrainJobController {
		log.V(5).Info("Skipping TrainJob managed by another controller", "managedBy", *tj.Spec.ManagedBy)
		return ctrl.Result{}, nil
	}
	now := metav1.NewTime(r.clock.Now())
	status := tj.Status.DeepCopy()
	if err := core.CheckSupported(tj); err != nil {
		setUnsupportedRuntime(status, tj, err.Error(), now)
		return ctrl.Result{}, r.patchStatus(ctx, tj, status)
	}
	var buildErr error
	if !isFinished(&tj.Status) {
		log.V(2).Info("Building TrainJob objects")
		if buildErr = r.build(ctx, tj); buildErr != nil {
			metrics.ReconcileErrors.WithLabelValues(reasonOf(buildErr)).Inc()
			r.recorder.Eventf(tj, corev1.EventTypeWarning, ReasonResourcesCreationFailed,
				"TrainJob resources reconciliation failed: %s", truncate(buildErr.Error()))
		}
	}
	requeue, err := r.computeStatus(ctx, tj, status, now)
	if !isFinished(&tj.Status) {
		setBuildError(status, tj.Status.BuildError, buildErr, now)
	}
	if err == nil {
		err = r.patchStatus(ctx, tj, status)
	}
	if err != nil {
		metrics.ReconcileErrors.WithLabelValues(metrics.ReasonStatusFailed).Inc()
		return ctrl.Result{}, errors.Join(buildErr, err)
	}
	if !isFinished(&tj.Status) && isFinished(status) {
		metrics.ObserveFinished(tj, status, now.Time)
	}
	return ctrl.Result{RequeueAfter: requeue}, buildErr
}

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
	var re *reasonError
	if errors.As(err, &re) {
		return re.reason
	}
	return metrics.ReasonBuildFailed
}

// build resolves the runtime (the snapshot first) and applies every object.
func (r *TrainJobReconciler) build(ctx context.Context, tj *trainer.TrainJob) error {
	rt, err := r.resolveRuntime(ctx, tj)
	if err != nil {
		return err
	}
	env, err := r.environment(ctx, tj, rt)
	if err != nil {
		return err
	}
	objs, err := r.runtime.NewObjectsIn(ctx, tj, rt, env)
	if err != nil {
		return withReason(metrics.ReasonBuildFailed, fmt.Errorf("building objects: %w", err))
	}
	return withReason(metrics.ReasonApplyFailed, r.applyObjects(ctx, tj, objs))
}

// resolveRuntime returns the runtime frozen in the TrainJob's snapshot, or the live runtime when
// there is no snapshot yet (the first build, or a TrainJob created before snapshots existed).
func (r *TrainJobReconciler) resolveRuntime(ctx context.Context, tj *trainer.TrainJob) (client.Object, error) {
	cm := &corev1.ConfigMap{}
	err := r.client.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: core.SnapshotName(tj)}, cm)
	if err == nil {
		return core.DecodeSnapshot(cm, tj)
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading the runtime snapshot: %w", err)
	}
	rt, err := core.NewRuntimeObject(tj)
	if err != nil {
		return nil, err
	}
	key := client.ObjectKey{Name: tj.Spec.RuntimeRef.Name}
	if _, namespaced := rt.(*trainer.TrainingRuntime); namespaced {
		key.Namespace = tj.Namespace
	}
	if err := r.client.Get(ctx, key, rt); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, withReason(metrics.ReasonRuntimeNotFound,
				fmt.Errorf("%s %q specified in TrainJob is not found", core.RuntimeGroupKind(tj).Kind, key.Name))
		}
		return nil, fmt.Errorf("reading %s %q: %w", core.RuntimeGroupKind(tj).Kind, key.Name, err)
	}
	return rt, nil
}

// computeStatus fills status from the JobSet, suspension and deadline, and returns when to look
// again for a deadline.
func (r *TrainJobReconciler) computeStatus(ctx context.Context, tj *trainer.TrainJob, status *trainer.TrainJobStatus, now metav1.Time) (time.Duration, error) {
	js := &jobsetv1alpha2.JobSet{}
	if err := r.client.Get(ctx, client.ObjectKeyFromObject(tj), js); err != nil {
		if !apierrors.IsNotFound(err) {
			return 0, fmt.Errorf("reading the JobSet: %w", err)
		}
		js = nil
	}
	mirrored, err := r.runtime.TrainJobStatus(tj, js)
	if err != nil {
		return 0, err
	}
	*status = *mirrored
	keepTerminalConditions(status, &tj.Status)
	setSuspendedCondition(status, tj, now)
	exceeded, requeue := deadlineExceeded(tj, status, now.Time)
	if exceeded {
		setDeadlineExceeded(status, tj, now)
		// Deleted by name, not only when the cache has it: the JobSet this very reconcile applied
		// may not be in the cache yet, and a failed TrainJob is never visited again.
		js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: tj.Namespace, Name: tj.Name}}
		if err := r.client.Delete(ctx, js, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return 0, fmt.Errorf("deleting the JobSet of a TrainJob past its deadline: %w", err)
		}
	}
	return requeue, nil
}

// patchStatus writes status with one merge patch, only when it changed.
func (r *TrainJobReconciler) patchStatus(ctx context.Context, tj *trainer.TrainJob, status *trainer.TrainJobStatus) error {
	if equality.Semantic.DeepEqual(&tj.Status, status) {
		return nil
	}
	patched := tj.DeepCopy()
	patched.Status = *status
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(tj)); err != nil {
		return fmt.Errorf("updating the TrainJob status: %w", err)
	}
	return nil
}

func truncate(s string) string {
	if len(s) <= maxEventMessage {
		return s
	}
	return s[:maxEventMessage] + " ..."
}
