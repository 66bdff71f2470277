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

package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// RuntimePatch is one manager's patch over the runtime's JobSet template. The controller applies
// the patches in list order as strategic merge patches; later patches win.
type RuntimePatch struct {
	// manager identifies who owns this patch, as a domain-prefixed path such as
	// "kueue.x-k8s.io/manager" or "trainer.kubeflow.org/kubeflow-sdk".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Manager string `json:"manager"`

	// time is when this patch last changed; admission sets it.
	// +optional
	Time *metav1.Time `json:"time,omitempty"`

	// trainingRuntimeSpec patches the runtime spec.
	// +optional
	TrainingRuntimeSpec *TrainingRuntimeSpecPatch `json:"trainingRuntimeSpec,omitempty"`
}

// TrainingRuntimeSpecPatch patches a TrainingRuntimeSpec.
type TrainingRuntimeSpecPatch struct {
	// template patches the JobSet template.
	// +optional
	Template *JobSetTemplatePatch `json:"template,omitempty"`
}

// JobSetTemplatePatch patches the JobSet template of a runtime.
type JobSetTemplatePatch struct {
	// metadata labels and annotations are merged into the JobSet's own.
	// +optional
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec patches the JobSet spec.
	// +optional
	Spec *JobSetSpecPatch `json:"spec,omitempty"`
}

// JobSetSpecPatch patches a JobSet spec.
type JobSetSpecPatch struct {
	// replicatedJobs patch the runtime's replicated jobs of the same name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	ReplicatedJobs []ReplicatedJobPatch `json:"replicatedJobs,omitempty"`
}

// ReplicatedJobPatch patches one replicated job.
type ReplicatedJobPatch struct {
	// name of the replicated job; it must exist in the runtime. The schema allows 253 characters,
	// as Kubeflow Trainer's does; the webhook refuses more than 63 (a replicated job's name is
	// part of its Jobs' names, which JobSet requires to be DNS labels).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// template patches the Job template.
	// +optional
	Template *JobTemplatePatch `json:"template,omitempty"`
}

// JobTemplatePatch patches a Job template.
type JobTemplatePatch struct {
	// metadata labels and annotations are merged into the Job template's.
	// +optional
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec patches the Job spec.
	// +optional
	Spec *JobSpecPatch `json:"spec,omitempty"`
}

// JobSpecPatch patches a Job spec.
type JobSpecPatch struct {
	// template patches the pod template.
	// +optional
	Template *PodTemplatePatch `json:"template,omitempty"`
}

// PodTemplatePatch patches a pod template.
type PodTemplatePatch struct {
	// metadata labels and annotations are merged into the pod template's.
	// +optional
	Metadata *metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec patches the pod spec.
	// +optional
	Spec *PodSpecPatch `json:"spec,omitempty"`
}

// PodSpecPatch is the part of a pod spec a runtime patch may change. Fields that decide where a
// pod runs (nodeSelector, affinity, tolerations, schedulingGates) stay mutable so that Kueue can
// rewrite them on admission; the others are fixed once the patch exists.
type PodSpecPatch struct {
	// serviceAccountName of the pods.
	// +optional
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	ServiceAccountName *string `json:"serviceAccountName,omitempty"`

	// volumes are merged by name into the pod's volumes.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Volumes []corev1.Volume `json:"volumes,omitempty"`

	// initContainers patch the pod's init containers of the same name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	InitContainers []ContainerPatch `json:"initContainers,omitempty"`

	// containers patch the pod's containers of the same name.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Containers []ContainerPatch `json:"containers,omitempty"`

	// imagePullSecrets are merged by name into the pod's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	ImagePullSecrets []corev1.LocalObjectReference `json:"imagePullSecrets,omitempty"`

	// securityContext of the pods.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	SecurityContext *corev1.PodSecurityContext `json:"securityContext,omitempty"`

	// nodeSelector is merged into the pod's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// affinity of the pods.
	// +optional
	Affinity *corev1.Affinity `json:"affinity,omitempty"`

	// tolerations of the pods.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`

	// schedulingGates are merged by name into the pod's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=16
	SchedulingGates []corev1.PodSchedulingGate `json:"schedulingGates,omitempty"`

	// terminationGracePeriodSeconds of the pods.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds,omitempty"`
}

// ContainerPatch patches one container of the runtime's pod template.
type ContainerPatch struct {
	// name of the container; it must exist in the runtime's replicated job. The schema allows 253
	// characters, as Kubeflow Trainer's does; the webhook refuses more than 63 (container names
	// are DNS labels).
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// env is merged by name into the container's environment. It is refused for the containers
	// node, dataset-initializer and model-initializer, whose env the TrainJob spec owns.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// volumeMounts are merged by name into the container's.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	VolumeMounts []corev1.VolumeMount `json:"volumeMounts,omitempty"`

	// securityContext of the container.
	// +optional
	SecurityContext *corev1.SecurityContext `json:"securityContext,omitempty"`
}
