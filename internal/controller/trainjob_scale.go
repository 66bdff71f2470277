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
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// The Scaled condition of an elastic TrainJob: True once its node job runs at the
// elastic.gantry.dev/target-nodes asked, False with the reason a scale was refused or failed.
const (
	ConditionScaled         = "Scaled"
	ReasonScaled            = "Scaled"
	ReasonScaleJobSetDone   = "JobSetFinished"
	ReasonScaleKueueManaged = "KueueManaged"
	ReasonScaleGateOff      = "ElasticJobSetDisabled"
	ReasonScaleRejected     = "ScaleRejected"
	ReasonScaleFailed       = "ScaleFailed"
)

const gateUnknown, gateOn, gateOff = int32(0), int32(1), int32(2)

// elasticGate remembers whether JobSet lets a running JobSet's parallelism change (its
// ElasticJobSet feature gate), learnt once per manager by a dry-run patch.
type elasticGate struct{ state atomic.Int32 }

// scale makes the node job of an elastic TrainJob's running JobSet follow target-nodes: the one
// change Gantry makes to a running JobSet, and only to the node job's parallelism and
// completions (JobSet's ElasticJobSet). The JobSet controller then adds or removes the highest
// indices. Builds stay at numNodes, so a suspended JobSet (whose templates the build owns) is not
// scaled, and the scale is made again once it runs. A refusal or a failure is a Scaled=False
// condition and an event; a failure is retried after the status is written.
func (r *TrainJobReconciler) scale(ctx context.Context, s *scope) phaseResult {
	js := s.jobSet
	if _, ok := s.tj.Annotations[knobs.ElasticTargetNodes]; !ok {
		return phaseResult{}
	}
	if js == nil {
		// Applied by this reconcile, so not in the cache yet, and its create event is not
		// watched: decide once the cache has it.
		if !s.buildFailed && !trainjob.Finished(s.status) && !trainjob.Suspended(s.tj) {
			return phaseResult{requeueAfter: time.Second}
		}
		return phaseResult{}
	}
	if !js.DeletionTimestamp.IsZero() || cached.Suspended(js) {
		return phaseResult{}
	}
	eff, err := r.knobs(ctx, s)
	if err != nil {
		return phaseResult{err: err}
	}
	if s.noSnapshot && !s.buildFailed && !trainjob.Finished(s.status) {
		// The build writes the snapshot before the JobSet, but the two caches fill apart, and
		// the snapshot's create event is not watched: its defaults (min and max nodes) are
		// read once the cache has it.
		return phaseResult{requeueAfter: time.Second}
	}
	elastic, errs := knobs.ParseElastic(eff)
	if len(errs) > 0 || elastic == nil || elastic.Target == nil {
		return phaseResult{} // the webhook refuses these; nothing to follow
	}
	index, current, found := cached.NodeJob(js)
	target := *elastic.Target
	if !found || current == target {
		return phaseResult{}
	}
	var res phaseResult
	from := fmt.Sprintf("from %d to %d nodes", current, target)
	if r.refuseScale(ctx, s, &res, js, from) {
		return res
	}
	patch, err := scalePatch(index, js.Spec.ReplicatedJobs[index].Name, target)
	if err != nil {
		return phaseResult{err: err}
	}
	if err = r.patchScale(ctx, js, patch); err == nil {
		ctrl.LoggerFrom(ctx).V(2).Info("Scaled the node job", "from", current, "to", target)
		s.setScaled(&res, metav1.ConditionTrue, ReasonScaled, "Scaled the node job "+from)
		return res
	}
	switch {
	case errors.Is(err, errGateOff):
		s.setScaled(&res, metav1.ConditionFalse, ReasonScaleGateOff, "Cannot scale "+from+": JobSet refuses to change a running JobSet's parallelism (enable its ElasticJobSet feature gate)")
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		s.setScaled(&res, metav1.ConditionFalse, ReasonScaleRejected, "Cannot scale "+from+": "+err.Error())
	default:
		s.setScaled(&res, metav1.ConditionFalse, ReasonScaleFailed, "Scaling "+from+" failed, retrying: "+err.Error())
		res.retryErr = fmt.Errorf("scaling the JobSet %s: %w", from, err)
	}
	return res
}

// refuseScale reports whether the scale may not be made, with the Scaled condition that says why:
// the JobSet has finished, or someone other than the user decided the TrainJob's size.
func (r *TrainJobReconciler) refuseScale(ctx context.Context, s *scope, res *phaseResult, js *jobsetv1alpha2.JobSet, from string) bool {
	if trainjob.Finished(s.status) || cached.Finished(js) {
		s.setScaled(res, metav1.ConditionFalse, ReasonScaleJobSetDone, "Cannot scale "+from+": the JobSet has finished")
		return true
	}
	owner, err := r.sizeOwner(ctx, s.tj)
	switch {
	case apierrors.IsForbidden(err):
		// Refused rather than risked: a scale past what Kueue admitted takes quota it did not give.
		s.setScaled(res, metav1.ConditionFalse, ReasonScaleKueueManaged, "Cannot scale "+from+": cannot tell whether Kueue admitted this TrainJob: "+err.Error())
	case err != nil:
		s.setScaled(res, metav1.ConditionFalse, ReasonScaleFailed, "Scaling "+from+" failed, retrying: "+err.Error())
		res.retryErr = fmt.Errorf("looking for a Kueue Workload of the TrainJob: %w", err)
	case owner != "":
		s.setScaled(res, metav1.ConditionFalse, ReasonScaleKueueManaged, "Cannot scale "+from+": "+owner+" admitted this TrainJob at its size, and does not resize TrainJobs")
	default:
		return false
	}
	return true
}

// scalePatch changes the parallelism and completions of replicated job index, after checking it
// is still the one named.
func scalePatch(index int, name string, target int32) (client.Patch, error) {
	base := fmt.Sprintf("/spec/replicatedJobs/%d", index)
	ops := []map[string]any{
		{"op": "test", "path": base + "/name", "value": name},
		{"op": "replace", "path": base + "/template/spec/parallelism", "value": target},
		{"op": "replace", "path": base + "/template/spec/completions", "value": target},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// errGateOff: JobSet refuses every scale of a running JobSet.
var errGateOff = errors.New("JobSet's ElasticJobSet feature gate is off")

// patchScale writes the scale. The first time, a dry run tells whether JobSet's ElasticJobSet
// gate is on: off, JobSet calls the change of replicatedJobs immutable, and every later scale is
// refused without asking. Any other refusal is this JobSet's alone.
func (r *TrainJobReconciler) patchScale(ctx context.Context, js *jobsetv1alpha2.JobSet, patch client.Patch) error {
	switch r.gate.state.Load() {
	case gateOff:
		return errGateOff
	case gateUnknown:
		err := r.client.Patch(ctx, js.DeepCopy(), patch, client.DryRunAll)
		if apierrors.IsInvalid(err) && strings.Contains(err.Error(), "immutable") {
			ctrl.LoggerFrom(ctx).Info("JobSet refuses to scale running JobSets; elastic scaling is off", "reason", err.Error())
			r.gate.state.Store(gateOff)
			return errGateOff
		}
		if err != nil {
			return err
		}
		r.gate.state.Store(gateOn)
	}
	return r.client.Patch(ctx, js, patch)
}

// setScaled sets the Scaled condition and, when it changes, queues its event in res.
func (s *scope) setScaled(res *phaseResult, status metav1.ConditionStatus, reason, message string) {
	if c := apimeta.FindStatusCondition(s.status.Conditions, ConditionScaled); c != nil && c.Status == status && c.Reason == reason && c.Message == message {
		return
	}
	apimeta.SetStatusCondition(&s.status.Conditions, metav1.Condition{
		Type: ConditionScaled, Status: status, Reason: reason, Message: message,
		ObservedGeneration: s.tj.Generation, LastTransitionTime: s.now,
	})
	eventType := corev1.EventTypeNormal
	if status != metav1.ConditionTrue {
		eventType = corev1.EventTypeWarning
	}
	res.event(eventType, reason, message)
}

// Kueue records each job it manages in a Workload labelled with the job's UID.
// +kubebuilder:rbac:groups=kueue.x-k8s.io,resources=workloads,verbs=list

// sizeOwner is who decided tj's size besides the user (trainjob.SizeOwner). A Workload is looked
// for around the cache, only when a scale is about to be made: Kueue may be absent (no such
// kind: nobody), and a watch of every Workload would cost memory for this rare question.
func (r *TrainJobReconciler) sizeOwner(ctx context.Context, tj *trainer.TrainJob) (string, error) {
	if owner := trainjob.SizeOwner(tj, false); owner != "" {
		return owner, nil
	}
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(trainjob.WorkloadListGVK)
	err := r.apiReader.List(ctx, list, client.InNamespace(tj.Namespace),
		client.MatchingLabels{trainjob.WorkloadJobUIDLabel: string(tj.UID)}, client.Limit(1))
	switch {
	case apimeta.IsNoMatchError(err) || apierrors.IsNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return trainjob.SizeOwner(tj, len(list.Items) > 0), nil
}
