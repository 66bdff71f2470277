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

// Package coscheduling gangs a TrainJob's pods with the scheduler-plugins coscheduling
// PodGroup: all pods are scheduled together or not at all.
package coscheduling

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/podgroup"
)

// Name of the plugin.
const Name = "CoScheduling"

// CoScheduling is the coscheduling gang policy.
type CoScheduling struct{}

var (
	_ framework.EnforcePodGroupPolicyPlugin = (*CoScheduling)(nil)
	_ framework.ComponentBuilderPlugin      = (*CoScheduling)(nil)
	_ framework.WatchExtensionPlugin        = (*CoScheduling)(nil)
	_ framework.KindOwnerPlugin             = (*CoScheduling)(nil)
)

// PodGroupKind is the kind the plugin creates: the scheduler-plugins coscheduling PodGroup.
var PodGroupKind = schedulerpluginsv1alpha1.SchemeGroupVersion.WithKind("PodGroup")

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &CoScheduling{}, nil
}

// Name returns the plugin name.
func (*CoScheduling) Name() string { return Name }

// ReconcilerBuilders re-render suspended TrainJobs when their pods' size changes.
func (*CoScheduling) ReconcilerBuilders() []framework.ReconcilerBuilder {
	return []framework.ReconcilerBuilder{podgroup.Watches()}
}

// PodGroupPolicyKind is Coscheduling.
func (*CoScheduling) PodGroupPolicyKind() runtime.PodGroupPolicyKind { return runtime.Coscheduling }

// OwnedKinds is the coscheduling PodGroup.
func (*CoScheduling) OwnedKinds() []framework.OwnedKind {
	return []framework.OwnedKind{{GVK: PodGroupKind, New: func() client.Object { return &schedulerpluginsv1alpha1.PodGroup{} }}}
}

// EnforcePodGroupPolicy labels every pod with its PodGroup. The runtime template must pick the
// scheduler (schedulerName) that runs the coscheduling plugin.
func (*CoScheduling) EnforcePodGroupPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	info.Scheduler.PodLabels[schedulerpluginsv1alpha1.PodGroupLabel] = tj.Name
	return nil
}

// Build returns the PodGroup sized for the whole gang.
func (*CoScheduling) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	gang := podgroup.GangOf(info, tj)
	pg := &schedulerpluginsv1alpha1.PodGroup{
		TypeMeta:   metav1.TypeMeta{APIVersion: PodGroupKind.GroupVersion().String(), Kind: PodGroupKind.Kind},
		ObjectMeta: gang.Meta,
		Spec: schedulerpluginsv1alpha1.PodGroupSpec{
			MinMember:              gang.Members,
			MinResources:           gang.Resources,
			ScheduleTimeoutSeconds: info.RuntimePolicy.PodGroupPolicy.Coscheduling.ScheduleTimeoutSeconds,
		},
	}
	return []apply.Desired{podgroup.Desired(pg)}, nil
}
