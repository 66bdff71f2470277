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

// Package volcano gangs a TrainJob's pods with a Volcano PodGroup, in the queue the runtime or a
// runtime patch names.
package volcano

import (
	"context"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/podgroup"
)

// Name of the plugin.
const Name = "Volcano"

// Volcano is the Volcano gang policy.
type Volcano struct{}

var (
	_ framework.EnforcePodGroupPolicyPlugin = (*Volcano)(nil)
	_ framework.ComponentBuilderPlugin      = (*Volcano)(nil)
	_ framework.WatchExtensionPlugin        = (*Volcano)(nil)
	_ framework.CustomValidationPlugin      = (*Volcano)(nil)
	_ framework.KindOwnerPlugin             = (*Volcano)(nil)
)

// PodGroupKind is the kind the plugin creates: Volcano's PodGroup.
var PodGroupKind = volcanov1beta1.SchemeGroupVersion.WithKind("PodGroup")

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &Volcano{}, nil
}

// Name returns the plugin name.
func (*Volcano) Name() string { return Name }

// ReconcilerBuilders re-render suspended TrainJobs when their pods' size changes.
func (*Volcano) ReconcilerBuilders() []framework.ReconcilerBuilder {
	return []framework.ReconcilerBuilder{podgroup.Watches()}
}

// PodGroupPolicyKind is Volcano.
func (*Volcano) PodGroupPolicyKind() runtime.PodGroupPolicyKind { return runtime.Volcano }

// OwnedKinds is Volcano's PodGroup.
func (*Volcano) OwnedKinds() []framework.OwnedKind {
	return []framework.OwnedKind{{GVK: PodGroupKind, New: func() client.Object { return &volcanov1beta1.PodGroup{} }}}
}

// EnforcePodGroupPolicy annotates every pod with its PodGroup.
func (*Volcano) EnforcePodGroupPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	info.Scheduler.PodAnnotations[volcanov1beta1.KubeGroupNameAnnotationKey] = tj.Name
	return nil
}

// Build returns the PodGroup sized for the whole gang, in the queue of the JobSet annotation
// scheduling.volcano.sh/queue-name, with the pods' priority class.
func (*Volcano) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	gang := podgroup.GangOf(info, tj)
	pg := &volcanov1beta1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: PodGroupKind.GroupVersion().String(), Kind: PodGroupKind.Kind},
		ObjectMeta: gang.Meta,
		Spec: volcanov1beta1.PodGroupSpec{
			MinMember:         gang.Members,
			MinResources:      &gang.Resources,
			Queue:             info.Annotations[volcanov1beta1.QueueNameAnnotationKey],
			PriorityClassName: priorityClassName(info),
		},
	}
	if nt := info.RuntimePolicy.PodGroupPolicy.Volcano.NetworkTopology; nt != nil {
		pg.Spec.NetworkTopology = nt.DeepCopy()
	}
	return []apply.Desired{podgroup.Desired(pg)}, nil
}

// priorityClassName is the last priority class the replicated jobs' pods set, in template order.
func priorityClassName(info *runtime.Info) string {
	name := ""
	for _, rj := range info.Template.ReplicatedJobs {
		if p := rj.Template.Spec.Template.Spec.PriorityClassName; p != "" {
			name = p
		}
	}
	return name
}

// builtinPriorityClasses exist in every cluster.
var builtinPriorityClasses = map[string]bool{"system-cluster-critical": true, "system-node-critical": true}

// Validate refuses an empty queue annotation and priority classes that do not exist, which Volcano
// would reject only once the job runs.
func (*Volcano) Validate(info *runtime.Info, _, tj *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	errs := validatePriorityClasses(info)
	queue, ok := info.Annotations[volcanov1beta1.QueueNameAnnotationKey]
	if !ok || queue != "" {
		return nil, errs
	}
	path := field.NewPath("spec", "runtimeRef")
	for i, v := range slices.Backward(tj.Spec.RuntimePatches) {
		p := v.TrainingRuntimeSpec
		if p != nil && p.Template != nil && p.Template.Metadata != nil {
			if _, set := p.Template.Metadata.Annotations[volcanov1beta1.QueueNameAnnotationKey]; set {
				path = field.NewPath("spec", "runtimePatches").Index(i).Child("trainingRuntimeSpec", "template", "metadata", "annotations").
					Key(volcanov1beta1.QueueNameAnnotationKey)
				break
			}
		}
	}
	return nil, append(errs, field.Invalid(path, queue,
		fmt.Sprintf("Volcano queue name must not be empty (annotation %s)", volcanov1beta1.QueueNameAnnotationKey)))
}

func validatePriorityClasses(info *runtime.Info) field.ErrorList {
	if info.Observed.PriorityClasses == nil {
		return nil
	}
	var errs field.ErrorList
	for _, rj := range info.Template.ReplicatedJobs {
		name := rj.Template.Spec.Template.Spec.PriorityClassName
		if name == "" || builtinPriorityClasses[name] || info.Observed.PriorityClasses[name] {
			continue
		}
		errs = append(errs, field.Invalid(field.NewPath("spec", "templateSpec", "priorityClassName"), name,
			fmt.Sprintf("PriorityClass %q doesn't exist: replicated job %q uses it", name, rj.Name)))
	}
	return errs
}
