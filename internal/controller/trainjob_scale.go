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
	"fmt"
	"sync/atomic"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
)

// The Scaled condition of an elastic TrainJob: True once its node job runs at the
// elastic.gantry.dev/target-nodes asked, False with the reason a scale was refused.
const (
	ConditionScaled              = "Scaled"
	ReasonScaled                 = "Scaled"
	ReasonScaleJobSetDone        = "JobSetFinished"
	ReasonScaleKueueManaged      = "KueueManaged"
	ReasonScaleGateOff           = "ElasticJobSetDisabled"
	kueueQueueLabel              = "kueue.x-k8s.io/queue-name"
	gateUnknown, gateOn, gateOff = int32(0), int32(1), int32(2)
)

// elasticGate remembers whether JobSet lets a running JobSet's parallelism change (its
// ElasticJobSet feature gate), learnt once per manager by a dry-run patch.
type elasticGate struct{ state atomic.Int32 }

// scale makes the node job of an elastic TrainJob's running JobSet follow target-nodes: the one
// change Gantry makes to a running JobSet, and only to the node job's parallelism and
// completions (JobSet's ElasticJobSet). The JobSet controller then adds or removes the highest
// indices. A refusal is a Scaled=False condition and a Warning event.
func (r *TrainJobReconciler) scale(ctx context.Context, s *scope) error {
	if _, ok := s.tj.Annotations[knobs.ElasticTargetNodes]; !ok || s.jobSet == nil {
		return nil
	}
	defaults, err := r.knobDefaults(ctx, s.tj)
	if err != nil {
		return err
	}
	elastic, errs := knobs.ParseElastic(knobs.Effective(s.tj.Annotations, defaults))
	if len(errs) > 0 || elastic == nil || elastic.Target == nil {
		return nil // the webhook refuses these; nothing to follow
	}
	index, current := nodeJob(s.jobSet)
	target := *elastic.Target
	if index < 0 || current == target {
		return nil
	}
	from := fmt.Sprintf("from %d to %d nodes", current, target)
	switch {
	case isFinished(s.status) || jobSetFinished(s.jobSet):
		s.scaleRefused(ReasonScaleJobSetDone, "Cannot scale "+from+": the JobSet has finished")
		return nil
	case s.tj.Labels[kueueQueueLabel] != "":
		s.scaleRefused(ReasonScaleKueueManaged, "Cannot scale "+from+": Kueue admitted this TrainJob at its size and does not resize TrainJobs")
		return nil
	}
	patch, err := scalePatch(index, target)
	if err != nil {
		return err
	}
	if on, err := r.gateOn(ctx, s.jobSet, patch); err != nil || !on {
		if err == nil {
			s.scaleRefused(ReasonScaleGateOff, "Cannot scale "+from+": JobSet refuses to change a running JobSet's parallelism (enable its ElasticJobSet feature gate)")
		}
		return err
	}
	if err := r.client.Patch(ctx, s.jobSet, patch); err != nil {
		return fmt.Errorf("scaling the JobSet %s: %w", from, err)
	}
	ctrl.LoggerFrom(ctx).V(2).Info("Scaled the node job", "from", current, "to", target)
	s.setScaled(metav1.ConditionTrue, ReasonScaled, "Scaled the node job "+from)
	return nil
}

// nodeJob finds the trainer's replicated job and its parallelism; -1 when there is none.
func nodeJob(js *jobsetv1alpha2.JobSet) (int, int32) {
	for i, rj := range js.Spec.ReplicatedJobs {
		if rj.Template.Labels[trainer.AncestorLabel] == trainer.AncestorTrainer {
			return i, ptr.Deref(rj.Template.Spec.Parallelism, 1)
		}
	}
	return -1, 0
}

// scalePatch changes the parallelism and completions of replicated job index, after checking it
// is the one meant.
func scalePatch(index int, target int32) (client.Patch, error) {
	base := fmt.Sprintf("/spec/replicatedJobs/%d", index)
	ops := []map[string]any{
		{"op": "replace", "path": base + "/template/spec/parallelism", "value": target},
		{"op": "replace", "path": base + "/template/spec/completions", "value": target},
	}
	data, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return client.RawPatch(types.JSONPatchType, data), nil
}

// gateOn tells whether JobSet accepts the scale, asking once with a dry run.
func (r *TrainJobReconciler) gateOn(ctx context.Context, js *jobsetv1alpha2.JobSet, patch client.Patch) (bool, error) {
	switch r.gate.state.Load() {
	case gateOn:
		return true, nil
	case gateOff:
		return false, nil
	}
	err := r.client.Patch(ctx, js.DeepCopy(), patch, client.DryRunAll)
	switch {
	case err == nil:
		r.gate.state.Store(gateOn)
		return true, nil
	case apierrors.IsInvalid(err) || apierrors.IsForbidden(err):
		ctrl.LoggerFrom(ctx).Info("JobSet refuses to scale running JobSets; elastic scaling is off", "reason", err.Error())
		r.gate.state.Store(gateOff)
		return false, nil
	default:
		return false, fmt.Errorf("asking JobSet whether it scales running JobSets: %w", err)
	}
}

func (s *scope) setScaled(status metav1.ConditionStatus, reason, message string) {
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
	s.events = append(s.events, queuedEvent{eventType: eventType, reason: reason, message: message})
}

// scaleRefused records a refusal once: the same refusal on later reconciles changes nothing.
func (s *scope) scaleRefused(reason, message string) {
	s.setScaled(metav1.ConditionFalse, reason, message)
}
