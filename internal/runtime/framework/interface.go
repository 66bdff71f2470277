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

// Package framework defines the plugin extension points and runs them in a fixed order.
//
// Building a TrainJob's objects runs, in this order:
//
//  1. EnforceMLPolicy: exactly one plugin, the one whose MLPolicyKind the runtime selects (PlainML
//     when it selects none), sets PodSet counts and framework environment.
//  2. EnforcePodGroupPolicy: the gang-scheduling plugin whose PodGroupPolicyKind the runtime
//     selects, if any, labels the pods.
//  3. EnforcePodSpec: plugins that apply to every runtime change pod specs.
//  4. PreBuildSync: the template owner computes endpoints and parallelism from the final counts.
//  5. Build: every builder returns the objects to apply.
//
// Within one extension point, plugins run in registry order. The framework alone decides which
// plugins run: an ML plugin (EnforceMLPolicyPlugin) and a gang plugin (EnforcePodGroupPolicyPlugin)
// take part in every extension point they implement only for runtimes that select their kind, so
// no plugin asks "am I the policy?". Admission runs CustomValidation on an Info that has not been
// through the Enforce points. Plugins are pure: they read only their arguments, never the API
// server.
package framework

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// Plugin is implemented by every plugin.
type Plugin interface {
	// Name identifies the plugin in errors and logs; it is unique in a registry.
	Name() string
}

// CustomValidationPlugin validates a TrainJob at admission. old is nil on create.
type CustomValidationPlugin interface {
	Plugin
	Validate(info *runtime.Info, old, new *trainer.TrainJob) (admission.Warnings, field.ErrorList)
}

// WatchExtensionPlugin adds watches to the TrainJob controller, e.g. on the objects it builds.
type WatchExtensionPlugin interface {
	Plugin
	ReconcilerBuilders() []ReconcilerBuilder
}

// ReconcilerBuilder adds watches to the TrainJob controller's builder. Builders with the same Name
// are added once, so plugins can share one.
type ReconcilerBuilder struct {
	Name string
	Add  func(b *builder.Builder, c client.Client) *builder.Builder
}

// EnforceMLPolicyPlugin applies one ML framework's policy. Only the plugin whose MLPolicyKind the
// runtime selects runs.
type EnforceMLPolicyPlugin interface {
	Plugin
	MLPolicyKind() runtime.MLPolicyKind
	EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error
}

// EnforcePodGroupPolicyPlugin applies one gang scheduler's policy to the pods. Only the plugin whose
// PodGroupPolicyKind the runtime selects runs.
type EnforcePodGroupPolicyPlugin interface {
	Plugin
	PodGroupPolicyKind() runtime.PodGroupPolicyKind
	EnforcePodGroupPolicy(info *runtime.Info, tj *trainer.TrainJob) error
}

// KindOwnerPlugin builds objects of kinds beyond the core ones (JobSets, ConfigMaps, Secrets):
// the TrainJob controller watches the objects it owns of these kinds, and a plugin whose kind's
// CRD is not installed is left out (Options.Installed), its policy then reported as unavailable.
type KindOwnerPlugin interface {
	Plugin
	OwnedKinds() []OwnedKind
}

// OwnedKind is one kind a plugin builds objects of.
type OwnedKind struct {
	GVK schema.GroupVersionKind
	// New returns an empty object of the kind, for the controller's watch.
	New func() client.Object
}

// EnforcePodSpecPlugin changes the pods of every runtime, whatever its ML policy.
type EnforcePodSpecPlugin interface {
	Plugin
	EnforcePodSpec(info *runtime.Info, tj *trainer.TrainJob) error
}

// PreComponentBuilderPlugin runs once every PodSet count is final, before Build.
type PreComponentBuilderPlugin interface {
	Plugin
	PreBuildSync(info *runtime.Info, tj *trainer.TrainJob) error
}

// ComponentBuilderPlugin returns the objects to apply for a TrainJob.
type ComponentBuilderPlugin interface {
	Plugin
	Build(ctx context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error)
}

// TrainJobStatusPlugin computes the TrainJob status from its JobSet (nil when absent). At most one
// is registered.
type TrainJobStatusPlugin interface {
	Plugin
	Status(tj *trainer.TrainJob, jobSet *jobsetv1alpha2.JobSet) (*trainer.TrainJobStatus, error)
}
