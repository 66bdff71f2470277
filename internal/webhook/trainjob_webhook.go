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

// Package webhook holds the admission webhooks: TrainJob defaulting and validation, and runtime
// validation. Rejections are 403 Forbidden with the field paths in the message, which tells
// them apart from the apiserver's own 422 schema rejections.
package webhook

import (
	"context"
	"errors"
	"fmt"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// +kubebuilder:webhook:path=/mutate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=true,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=defaulter.trainjob.trainer.kubeflow.org,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-trainer-kubeflow-org-v1alpha1-trainjob,mutating=false,failurePolicy=fail,sideEffects=None,groups=trainer.kubeflow.org,resources=trainjobs,verbs=create;update,versions=v1alpha1,name=validator.trainjob.trainer.kubeflow.org,admissionReviewVersions=v1

// The PriorityClasses a Volcano runtime's pods name are read from the cache; a runtime the cache
// does not hold yet is read around it.
// +kubebuilder:rbac:groups=scheduling.k8s.io,resources=priorityclasses,verbs=list;watch
// +kubebuilder:rbac:groups=trainer.kubeflow.org,resources=trainingruntimes;clustertrainingruntimes,verbs=get

// TrainJobDefaulter stamps runtimePatches[].time: now for a new or changed patch, the old time
// for an unchanged one.
type TrainJobDefaulter struct {
	clock clock.PassiveClock
}

var _ admission.Defaulter[*trainer.TrainJob] = (*TrainJobDefaulter)(nil)

// Default sets the patch times.
func (d *TrainJobDefaulter) Default(ctx context.Context, tj *trainer.TrainJob) error {
	var old *trainer.TrainJob
	if req, err := admission.RequestFromContext(ctx); err == nil && len(req.OldObject.Raw) > 0 {
		old = &trainer.TrainJob{}
		if err := decodeInto(req.OldObject.Raw, old); err != nil {
			return err
		}
	}
	StampPatchTimes(tj, old, metav1.NewTime(d.clock.Now()))
	return nil
}

// StampPatchTimes sets the time of every patch of tj that is new or changed since old (nil on
// create) to now, and keeps the old time of unchanged ones.
func StampPatchTimes(tj, old *trainer.TrainJob, now metav1.Time) {
	previous := map[string]trainer.RuntimePatch{}
	if old != nil {
		for _, p := range old.Spec.RuntimePatches {
			previous[p.Manager] = p
		}
	}
	for i := range tj.Spec.RuntimePatches {
		p := &tj.Spec.RuntimePatches[i]
		prev, existed := previous[p.Manager]
		if !existed {
			if p.Time == nil {
				p.Time = now.DeepCopy()
			}
			continue
		}
		a, b := *p, prev
		a.Time, b.Time = nil, nil
		if equality.Semantic.DeepEqual(a, b) {
			p.Time = prev.Time
		} else {
			p.Time = now.DeepCopy()
		}
	}
}

// TrainJobValidator validates TrainJobs against their runtime: the live one on create, the
// snapshot the TrainJob builds from on update.
type TrainJobValidator struct {
	client client.Client
	// apiReader reads uncached, for a runtime the cache does not hold yet.
	apiReader client.Reader
	runtime   *core.Runtime
}

var _ admission.Validator[*trainer.TrainJob] = (*TrainJobValidator)(nil)

// ValidateCreate validates a new TrainJob.
func (v *TrainJobValidator) ValidateCreate(ctx context.Context, tj *trainer.TrainJob) (admission.Warnings, error) {
	return v.validate(ctx, nil, tj)
}

// ValidateUpdate validates a changed TrainJob.
func (v *TrainJobValidator) ValidateUpdate(ctx context.Context, old, tj *trainer.TrainJob) (admission.Warnings, error) {
	return v.validate(ctx, old, tj)
}

// ValidateDelete allows every deletion.
func (v *TrainJobValidator) ValidateDelete(context.Context, *trainer.TrainJob) (admission.Warnings, error) {
	return nil, nil
}

func (v *TrainJobValidator) validate(ctx context.Context, old, tj *trainer.TrainJob) (admission.Warnings, error) {
	refPath := field.NewPath("spec", "runtimeRef")
	if err := ref.CheckSupported(tj); err != nil {
		return nil, field.ErrorList{field.Invalid(refPath, tj.Spec.RuntimeRef, err.Error())}.ToAggregate()
	}
	if old != nil && !specChanged(old, tj) {
		// Metadata (labels, finalizers: the garbage collector's foreground deletion) and
		// suspend: nothing the runtime could refuse, and these updates must go through even
		// after the runtime is deleted (Kueue preempts by suspending). Gantry's knobs are
		// checked when they change.
		if !knobs.Changed(old.Annotations, tj.Annotations) {
			return nil, nil
		}
		return nil, v.validateKnobChange(ctx, old, tj)
	}
	if errs := core.ValidateTrainJob(old, tj); len(errs) > 0 {
		// Checks the schema would make were Gantry's CRD stricter than Kubeflow Trainer's: made
		// before the runtime is read, as the apiserver refuses a schema error before any webhook.
		return nil, errs.ToAggregate()
	}
	lookup := ref.SnapshotThenLive
	if old == nil {
		lookup = ref.LiveOnly
	}
	rt, err := v.resolveRuntime(ctx, tj, lookup)
	if err != nil {
		return nil, err
	}
	obs, err := v.observe(ctx, old, tj, rt)
	if err != nil {
		return nil, err
	}
	warnings, errs := v.runtime.ValidateObjects(old, tj, rt, obs)
	warnings = append(core.TrainJobWarnings(rt), warnings...)
	if len(errs) > 0 {
		return warnings, errs.ToAggregate()
	}
	return warnings, nil
}

// resolveRuntime reads the runtime tj builds from; a missing one is an admission error naming
// spec.runtimeRef.
func (v *TrainJobValidator) resolveRuntime(ctx context.Context, tj *trainer.TrainJob, lookup ref.Lookup) (client.Object, error) {
	rt, _, err := ref.ResolveRuntime(ctx, v.client, tj, lookup)
	if _, notFound := errors.AsType[*ref.RuntimeNotFoundError](err); notFound && v.apiReader != nil {
		// A runtime applied together with its TrainJob (one kubectl apply) may not have reached
		// the cache yet: ask the apiserver before refusing.
		rt, _, err = ref.ResolveRuntime(ctx, v.apiReader, tj, lookup)
	}
	if err == nil {
		return rt, nil
	}
	if nf, ok := errors.AsType[*ref.RuntimeNotFoundError](err); ok {
		kind := "clusterTrainingRuntime"
		if nf.Kind == trainer.TrainingRuntimeKind {
			kind = "trainingRuntime"
		}
		return nil, field.ErrorList{field.NotFound(field.NewPath("spec", "runtimeRef"), fmt.Sprintf("%s: specified %s must be created before the TrainJob is created", nf.Name, kind))}.ToAggregate()
	}
	return nil, fmt.Errorf("reading the runtime: %w", err)
}

// specChanged reports whether an update changes the spec beyond spec.suspend.
func specChanged(old, tj *trainer.TrainJob) bool {
	a, b := old.Spec.DeepCopy(), tj.Spec.DeepCopy()
	a.Suspend, b.Suspend = nil, nil
	return !equality.Semantic.DeepEqual(a, b)
}

// observe reads what the checks need: the JobSet on update (the runtime patch rules), the
// PriorityClass names for Volcano runtimes.
func (v *TrainJobValidator) observe(ctx context.Context, old, tj *trainer.TrainJob, rt client.Object) (*runtime.Observed, error) {
	obs := &runtime.Observed{}
	if old != nil {
		js := &jobsetv1alpha2.JobSet{}
		err := v.client.Get(ctx, client.ObjectKeyFromObject(tj), js)
		switch {
		case err == nil:
			obs.JobSet = js
		case !apierrors.IsNotFound(err):
			return nil, fmt.Errorf("reading the JobSet: %w", err)
		}
	}
	spec, err := ref.RuntimeSpec(rt)
	if err != nil || spec.PodGroupPolicy == nil || spec.PodGroupPolicy.Volcano == nil {
		return obs, err
	}
	list := &schedulingv1.PriorityClassList{}
	if err := v.client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("listing PriorityClasses: %w", err)
	}
	obs.PriorityClasses = make(map[string]bool, len(list.Items))
	for _, pc := range list.Items {
		obs.PriorityClasses[pc.Name] = true
	}
	return obs, nil
}

var errNilDependency = errors.New("webhook: nil dependency")
