// Package coscheduling gangs a TrainJob's pods with the scheduler-plugins coscheduling
// PodGroup: all pods are scheduled together or not at all.
package coscheduling

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
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
)

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

func enabled(info *runtime.Info) bool {
	return info.RuntimePolicy.PodGroupPolicy != nil && info.RuntimePolicy.PodGroupPolicy.Coscheduling != nil
}

// EnforcePodGroupPolicy labels every pod with its PodGroup. The runtime template must pick the
// scheduler (schedulerName) that runs the coscheduling plugin.
func (*CoScheduling) EnforcePodGroupPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	if enabled(info) {
		info.Scheduler.PodLabels[schedulerpluginsv1alpha1.PodGroupLabel] = tj.Name
	}
	return nil
}

// Build returns the PodGroup sized for the whole gang. Like the JobSet, it is not changed while
// the TrainJob runs.
func (*CoScheduling) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]runtime.Object, error) {
	if !enabled(info) {
		return nil, nil
	}
	members, resources := info.GangSize()
	pg := &schedulerpluginsv1alpha1.PodGroup{
		TypeMeta: metav1.TypeMeta{APIVersion: schedulerpluginsv1alpha1.SchemeGroupVersion.String(), Kind: "PodGroup"},
		ObjectMeta: metav1.ObjectMeta{
			Name:            tj.Name,
			Namespace:       tj.Namespace,
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tj, trainer.GroupVersion.WithKind(trainer.TrainJobKind))},
		},
		Spec: schedulerpluginsv1alpha1.PodGroupSpec{
			MinMember:              members,
			MinResources:           resources,
			ScheduleTimeoutSeconds: info.RuntimePolicy.PodGroupPolicy.Coscheduling.ScheduleTimeoutSeconds,
		},
	}
	return []runtime.Object{{Object: pg, Mode: runtime.ApplyUnlessRunning}}, nil
}
