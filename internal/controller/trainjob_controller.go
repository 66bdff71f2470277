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

// Package controller holds the TrainJob and runtime reconcilers.
package controller

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/statusca"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// FieldOwner is the field manager of everything the controller writes.
const FieldOwner = "trainer"

// TrainJobReconciler turns TrainJobs into JobSets and reports their progress.
type TrainJobReconciler struct {
	client client.Client
	// apiReader reads around the cache, where a cached answer could make the controller do
	// something it cannot undo (run a finished training again, adopt a foreign object).
	apiReader client.Reader
	runtime   *core.Runtime
	applier   *apply.Applier
	recorder  record.EventRecorder
	clock     clock.PassiveClock
	// ca is where builds read the status server's CA; nil when the TrainJobStatus gate is off.
	ca *cert.CABundle
	// publisher writes the CA to the TrainJobs' namespaces; set with ca.
	publisher *statusca.Publisher
	// gate is whether JobSet scales running JobSets (elastic TrainJobs).
	gate elasticGate
}

// NewTrainJobReconciler returns a reconciler; every dependency is required.
func NewTrainJobReconciler(c client.Client, apiReader client.Reader, rt *core.Runtime, recorder record.EventRecorder, clk clock.PassiveClock) (*TrainJobReconciler, error) {
	if c == nil || apiReader == nil || rt == nil || recorder == nil || clk == nil {
		return nil, errors.New("NewTrainJobReconciler: nil dependency")
	}
	applier, err := apply.NewApplier(c, apiReader, FieldOwner)
	if err != nil {
		return nil, err
	}
	return &TrainJobReconciler{client: c, apiReader: apiReader, runtime: rt, applier: applier, recorder: recorder, clock: clk}, nil
}

// What the TrainJob controller reads goes through the manager's cache (list, watch), except the
// re-reads around it (get: confirmJobSetGone, and the applier after a create found the name
// taken). Writes: server-side apply (patch; create when it creates), create then update for
// ConfigMaps and create-once Secrets, and the status patch. Docs: docs/install.md#rbac.
// Finished TrainJobs are deleted at the end of their TTL (ttl.gantry.dev/seconds-after-finished).
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs,verbs=get;list;watch;delete
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/status,verbs=patch
// Asked by the OwnerReferencesPermissionEnforcement admission plugin, where it is on, for the
// blockOwnerDeletion owner reference every object built for a TrainJob carries.
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainjobs/finalizers,verbs=update
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=list;watch
// +kubebuilder:rbac:groups=jobset.x-k8s.io,resources=jobsets,verbs=get;list;watch;create;patch;delete
// +kubebuilder:rbac:groups="",resources=configmaps,verbs=get;list;watch;create;update
// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create
// +kubebuilder:rbac:groups="",resources=events,verbs=create;patch
// +kubebuilder:rbac:groups=scheduling.x-k8s.io;scheduling.volcano.sh,resources=podgroups,verbs=list;watch;create;patch
// +kubebuilder:rbac:groups="",resources=limitranges,verbs=list;watch
// +kubebuilder:rbac:groups=node.k8s.io,resources=runtimeclasses,verbs=list;watch

// Reconcile builds the TrainJob's objects while it is unfinished and writes its status once,
// through the phases of runPhases; the events it found are emitted after that write.
func (r *TrainJobReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	tj := &trainer.TrainJob{}
	if err := r.client.Get(ctx, req.NamespacedName, tj); err != nil {
		if client.IgnoreNotFound(err) != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{}, r.releaseOrphanJobSet(ctx, req.NamespacedName)
	}
	log := ctrl.LoggerFrom(ctx).WithValues("trainJob", klog.KObj(tj))
	ctx = ctrl.LoggerInto(ctx, log)
	if !trainjob.ManagedByGantry(tj) {
		log.V(5).Info("Skipping TrainJob managed by another controller", "managedBy", *tj.Spec.ManagedBy)
		return r.reconcileDispatched(ctx, tj)
	}
	if !tj.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, r.releaseJobSet(ctx, tj)
	}
	s := &scope{tj: tj, status: tj.Status.DeepCopy(), now: metav1.NewTime(r.clock.Now())}
	return r.runPhases(ctx, s, beforeStatusWrite, afterStatusWrite)
}

// scope is one reconcile's state, shared by its phases: the TrainJob as read, the status being
// computed, and what earlier phases found that later ones read.
type scope struct {
	tj     *trainer.TrainJob
	status *trainer.TrainJobStatus
	now    metav1.Time
	jobSet *jobsetv1alpha2.JobSet
	// jobSetGone is set when a read around the cache confirmed that the JobSet the TrainJob had
	// does not exist any more.
	jobSetGone bool
	// buildFailed: this reconcile's build failed, so no JobSet it applied is awaited.
	buildFailed bool
	// knobs are the effective Gantry annotations, once read (TrainJobReconciler.knobs);
	// noSnapshot says the runtime's defaults among them were not found (no snapshot cached).
	knobs      map[string]string
	noSnapshot bool
}

// patchStatus writes status with one merge patch, only when it changed.
func (r *TrainJobReconciler) patchStatus(ctx context.Context, tj *trainer.TrainJob, status *trainer.TrainJobStatus) error {
	if equality.Semantic.DeepEqual(&tj.Status, status) && !writeUnchangedStatus() {
		return nil
	}
	patched := tj.DeepCopy()
	patched.Status = *status
	if err := r.client.Status().Patch(ctx, patched, client.MergeFrom(tj)); err != nil {
		return fmt.Errorf("updating the TrainJob status: %w", err)
	}
	return nil
}
