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

// Package core builds a TrainJob's Info over its runtime and drives the plugin framework; the
// runtime itself is found and frozen by package ref.
package core

import (
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// Runtime builds, validates and reports on TrainJobs with one plugin framework.
type Runtime struct {
	fwk *framework.Framework
}

// New returns a Runtime over fwk.
func New(fwk *framework.Framework) (*Runtime, error) {
	if fwk == nil {
		return nil, errors.New("core.New: nil framework")
	}
	return &Runtime{fwk: fwk}, nil
}

// Framework returns the plugin framework.
func (r *Runtime) Framework() *framework.Framework {
	return r.fwk
}

// RuntimeInfo builds tj's Info over the runtime rt and runs every Enforce extension point, so its
// PodSets are what the JobSet will hold. obs is what the caller read from the cluster (nil when
// nothing).
func (r *Runtime) RuntimeInfo(tj *trainer.TrainJob, rt client.Object, obs *runtime.Observed) (*runtime.Info, error) {
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return nil, err
	}
	info, err := NewInfo(tj, rt.GetName(), spec, obs)
	if err != nil {
		return nil, err
	}
	info.Knobs = knobs.Of(tj, rt)
	if err := r.fwk.RunEnforcePipeline(info, tj); err != nil {
		return nil, err
	}
	return info, nil
}

// Build is what a build of a TrainJob produces.
type Build struct {
	// Objects are the objects to write, in order.
	Objects []apply.Desired
	// Disabled are the optional features left out, and why.
	Disabled []runtime.DisabledFeature
}

// NewObjects returns every object to write for tj over the runtime rt: the runtime snapshot
// first, then the plugins' objects in registry order. ConfigMaps and Secrets carry the TrainJob
// label, which is how the controller's cache selects them. obs may be nil.
func (r *Runtime) NewObjects(ctx context.Context, tj *trainer.TrainJob, rt client.Object, obs *runtime.Observed) (*Build, error) {
	info, err := r.RuntimeInfo(tj, rt, obs)
	if err != nil {
		return nil, err
	}
	objs, err := r.fwk.RunComponentBuilderPlugins(ctx, info, tj)
	if err != nil {
		return nil, err
	}
	snapshot := ref.NewSnapshotSkeleton(tj)
	objs = append([]apply.Desired{{
		Object: snapshot,
		Mode:   apply.IfAbsent,
		// A ConfigMap of that name the cache did not show (an unlabelled one) is found when the
		// create fails: it is not Gantry's snapshot, and must not stand for it.
		Accept: func(existing client.Object) error {
			cm, ok := existing.(*corev1.ConfigMap)
			if !ok {
				return fmt.Errorf("the runtime snapshot read as %T", existing)
			}
			return ref.CheckSnapshot(cm, tj)
		},
		Complete: func() error {
			if err := ref.FillSnapshot(snapshot, rt); err != nil {
				return err
			}
			return ref.FillSnapshotKnobs(snapshot, knobs.Defaults(rt.GetAnnotations()))
		},
	}}, objs...)
	for _, o := range objs {
		if o.Mode != apply.Shared && isConfigMapOrSecret(o.Object) {
			labels := o.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			labels[TrainJobNameLabel] = tj.Name
			o.SetLabels(labels)
		}
	}
	return &Build{Objects: objs, Disabled: info.Disabled}, nil
}

// TrainJobNameLabel is put on every ConfigMap and Secret Gantry creates, with the TrainJob's
// name, so the controller caches only those.
const TrainJobNameLabel = ref.TrainJobNameLabel

func isConfigMapOrSecret(obj client.Object) bool {
	kind := obj.GetObjectKind().GroupVersionKind()
	return kind.Group == "" && (kind.Kind == "ConfigMap" || kind.Kind == "Secret")
}

// ValidateObjects runs the plugins' admission checks of tj (old is nil on create) against the
// runtime rt, with what the caller read from the cluster (obs: the existing JobSet, the
// PriorityClasses; nil when nothing). When the patches do not apply to the runtime, the checks run
// on the unpatched runtime, so the JobSet plugin can say which patch is wrong.
func (r *Runtime) ValidateObjects(old, tj *trainer.TrainJob, rt client.Object, obs *runtime.Observed) (admission.Warnings, field.ErrorList) {
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
	}
	info, err := NewInfo(tj, rt.GetName(), spec, obs)
	if err != nil {
		unpatched := tj.DeepCopy()
		unpatched.Spec.RuntimePatches = nil
		if info, err = NewInfo(unpatched, rt.GetName(), spec, obs); err != nil {
			return nil, field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
		}
	} else if built, err := r.RuntimeInfo(tj, rt, obs); err == nil {
		info.FinalPodSets = built.PodSets
	}
	info.Knobs = knobs.Of(tj, rt)
	if errs := validateKnobs(old, tj, rt); len(errs) > 0 {
		// The plugins read the knobs: they are checked on sound ones only.
		return nil, errs
	}
	return r.fwk.RunCustomValidationPlugins(info, old, tj)
}

// TrainJobStatus computes tj's status from its JobSet (nil when absent).
func (r *Runtime) TrainJobStatus(tj *trainer.TrainJob, jobSet *jobsetv1alpha2.JobSet) (*trainer.TrainJobStatus, error) {
	return r.fwk.RunTrainJobStatusPlugin(tj, jobSet)
}

// RuntimeClassNames are the RuntimeClasses the runtime's pod templates name, in template order.
func RuntimeClassNames(spec *trainer.TrainingRuntimeSpec) []string {
	var names []string
	for _, rj := range spec.Template.Spec.ReplicatedJobs {
		if n := rj.Template.Spec.Template.Spec.RuntimeClassName; n != nil && *n != "" {
			names = append(names, *n)
		}
	}
	return names
}
