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

// TrainJob is one training run: it points at a TrainingRuntime or ClusterTrainingRuntime and
// fills in what differs per job (image, command, nodes, resources, data and model locations).
//
// The State column lists only conditions that are true: Kubeflow Trainer v2.3 shows the last
// condition's type, so a resumed, running job reads "Suspended" (kubeflow/trainer#3963 fixes it
// the same way). Suspended, from #3963 too, is spec.suspend: whether the job is asked to be
// suspended, which Kueue sets until it admits the job. State is empty while a job is
// created, pending or running; Active, Ready and Failed tell those apart. They come from
// status.jobsStatus of the replicated job "node", the training nodes (with MPI, the launcher's
// workers), and count Jobs, not pods: a torch "node" is one Job of numNodes pods. Progress
// (percent) and ETA (seconds) are what the training code last reported to the status server;
// empty until it does. Message (-o wide) is the message of the condition that holds. A column
// shows the first value its JSONPath finds.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=tj
// +kubebuilder:printcolumn:name="State",type=string,JSONPath=`.status.conditions[?(@.status=="True")].type`,description="The condition that holds (the first, if several): Suspended, Complete or Failed; empty while created, pending or running"
// +kubebuilder:printcolumn:name="Suspended",type=boolean,JSONPath=`.spec.suspend`,description="Whether the TrainJob is asked to be suspended (spec.suspend), as in Kubeflow Trainer (kubeflow/trainer#3963)"
// +kubebuilder:printcolumn:name="Runtime",type=string,JSONPath=`.spec.runtimeRef.name`,description="The runtime the TrainJob references"
// +kubebuilder:printcolumn:name="Nodes",type=integer,JSONPath=`.spec.trainer.numNodes`,description="Nodes the TrainJob asks for; empty when it takes the runtime's"
// +kubebuilder:printcolumn:name="Active",type=integer,JSONPath=`.status.jobsStatus[?(@.name=="node")].active`,description="Jobs of replicated job node (the training nodes) with at least one active pod"
// +kubebuilder:printcolumn:name="Ready",type=integer,JSONPath=`.status.jobsStatus[?(@.name=="node")].ready`,description="Jobs of replicated job node (the training nodes) with all their pods ready"
// +kubebuilder:printcolumn:name="Failed",type=integer,JSONPath=`.status.jobsStatus[?(@.name=="node")].failed`,description="Failed Jobs of replicated job node (the training nodes)"
// +kubebuilder:printcolumn:name="Progress",type=integer,JSONPath=`.status.trainerStatus.progressPercentage`,description="Percent of the training done, as the training code last reported"
// +kubebuilder:printcolumn:name="ETA",type=integer,JSONPath=`.status.trainerStatus.estimatedRemainingSeconds`,description="Seconds of training left, as the training code last estimated"
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`,description="Time since the TrainJob was created"
// +kubebuilder:printcolumn:name="Message",type=string,JSONPath=`.status.conditions[?(@.status=="True")].message`,priority=1,description="The message of the condition in State"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name must match RFC 1035 DNS label format"
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 63",message="metadata.name must be no more than 63 characters"
type TrainJob struct {
	metav1.TypeMeta `json:",inline"`

	// metadata of the TrainJob.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the TrainJob. Optional in the schema, as in Kubeflow Trainer's; the webhook refuses
	// a TrainJob without one.
	// +optional
	Spec TrainJobSpec `json:"spec,omitzero"`

	// status of the TrainJob, written by the controller.
	// +optional
	Status TrainJobStatus `json:"status,omitzero"`
}

// TrainJobSpec is what the user asks for.
//
// The field-level `self == oldSelf` rules only fire when both the old and the new object carry
// the field; the webhook refuses adding or removing initializer, trainer and
// activeDeadlineSeconds after creation (Kubeflow Trainer's schema, which Gantry's matches, lets
// it through).
type TrainJobSpec struct {
	// runtimeRef is the reference to the training runtime.
	// +required
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	RuntimeRef RuntimeRef `json:"runtimeRef,omitzero"`

	// initializer configures the dataset and model initializer steps of the runtime.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Initializer *Initializer `json:"initializer,omitempty"`

	// trainer overrides the trainer step of the runtime.
	// +optional
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	Trainer *Trainer `json:"trainer,omitempty"`

	// runtimePatches are patches over the runtime's JobSet template, one per manager (the Python
	// SDK, Kueue, a user), applied in list order. They may change only while the TrainJob is
	// suspended before or after the change, and never while a replicated job is active.
	// +optional
	// +listType=map
	// +listMapKey=manager
	// +kubebuilder:validation:MaxItems=16
	RuntimePatches []RuntimePatch `json:"runtimePatches,omitempty"`

	// suspend stops the TrainJob's pods while true, and resumes them when set back to false.
	// +optional
	// +kubebuilder:default=false
	Suspend *bool `json:"suspend,omitempty"`

	// activeDeadlineSeconds is how long the TrainJob may run, counted from its creation or its last
	// resume, before it is failed with reason DeadlineExceeded.
	// +optional
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	ActiveDeadlineSeconds *int64 `json:"activeDeadlineSeconds,omitempty"`

	// managedBy names the controller that reconciles this TrainJob: the built-in controller
	// ("trainer.kubeflow.org/trainjob-controller") or Kueue's MultiKueue ("kueue.x-k8s.io/multikueue").
	// +optional
	// +kubebuilder:default="trainer.kubeflow.org/trainjob-controller"
	// +kubebuilder:validation:MaxLength=253
	// +kubebuilder:validation:XValidation:rule="self in ['trainer.kubeflow.org/trainjob-controller', 'kueue.x-k8s.io/multikueue']",message="ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="field is immutable"
	ManagedBy *string `json:"managedBy,omitempty"`
}

// RuntimeRef points at a TrainingRuntime in the TrainJob's namespace or at a
// ClusterTrainingRuntime.
type RuntimeRef struct {
	// name of the runtime.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// apiGroup of the runtime.
	// +optional
	// +kubebuilder:default="trainer.kubeflow.org"
	// +kubebuilder:validation:MaxLength=253
	APIGroup *string `json:"apiGroup,omitempty"`

	// kind of the runtime: TrainingRuntime or ClusterTrainingRuntime.
	// +optional
	// +kubebuilder:default="ClusterTrainingRuntime"
	// +kubebuilder:validation:MaxLength=253
	Kind *string `json:"kind,omitempty"`
}

// Initializer configures the dataset and model initializer steps.
type Initializer struct {
	// dataset overrides the runtime's dataset-initializer step.
	// +optional
	Dataset *DatasetInitializer `json:"dataset,omitempty"`

	// model overrides the runtime's model-initializer step.
	// +optional
	Model *ModelInitializer `json:"model,omitempty"`
}

// DatasetInitializer describes where the dataset comes from.
type DatasetInitializer struct {
	// storageUri is the dataset location, e.g. hf://tatsu-lab/alpaca or s3://bucket/path.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')",message="storageUri may be empty, or it must be a valid URI (scheme://...)"
	StorageUri *string `json:"storageUri,omitempty"` //nolint:revive // JSON name fixed by the wire contract

	// env is added to the dataset initializer container.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// secretRef names a Secret in the TrainJob's namespace whose keys become environment
	// variables of the initializer, e.g. access tokens.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// ModelInitializer describes where the model comes from.
type ModelInitializer struct {
	// storageUri is the model location, e.g. hf://meta-llama/Llama-3.2-1B-Instruct.
	// +optional
	// +kubebuilder:validation:MaxLength=2048
	// +kubebuilder:validation:XValidation:rule="self == '' || self.matches('^[A-Za-z][A-Za-z0-9+.-]*://.+$')",message="storageUri may be empty, or it must be a valid URI (scheme://...)"
	StorageUri *string `json:"storageUri,omitempty"` //nolint:revive // JSON name fixed by the wire contract

	// env is added to the model initializer container.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// secretRef names a Secret in the TrainJob's namespace whose keys become environment
	// variables of the initializer.
	// +optional
	SecretRef *corev1.LocalObjectReference `json:"secretRef,omitempty"`
}

// Trainer overrides the trainer step (the replicated job labelled as the trainer ancestor).
type Trainer struct {
	// image of the trainer container ("node").
	// +optional
	// +kubebuilder:validation:MaxLength=500
	Image *string `json:"image,omitempty"`

	// command of the trainer container.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=1048576
	Command []string `json:"command,omitempty"`

	// args of the trainer container.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:items:MaxLength=1048576
	Args []string `json:"args,omitempty"`

	// env is added to the trainer container.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=128
	Env []corev1.EnvVar `json:"env,omitempty"`

	// numNodes is the number of training nodes; it defaults to the runtime's mlPolicy.numNodes.
	// +optional
	// +kubebuilder:validation:Minimum=0
	NumNodes *int32 `json:"numNodes,omitempty"`

	// resourcesPerNode are merged, per resource, over the trainer container's resources.
	// +optional
	ResourcesPerNode *corev1.ResourceRequirements `json:"resourcesPerNode,omitempty"`

	// numProcPerNode is the number of processes per node; torch treats an unset value as "auto".
	// +optional
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="numProcPerNode must be greater than or equal to 1"
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
}

// TrainJobStatus is what the controller observed.
//
// +kubebuilder:validation:MinProperties=1
type TrainJobStatus struct {
	// conditions are Suspended, Complete and Failed.
	// +optional
	// +listType=map
	// +listMapKey=type
	// +patchStrategy=merge
	// +patchMergeKey=type
	// +kubebuilder:validation:MaxItems=8
	Conditions []metav1.Condition `json:"conditions,omitempty" patchStrategy:"merge" patchMergeKey:"type"`

	// jobsStatus mirrors the JobSet's replicated job status, one entry per replicated job.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=100
	JobsStatus []JobStatus `json:"jobsStatus,omitempty"`

	// trainerStatus is the progress the training code reported through the status server.
	// +optional
	TrainerStatus *TrainJobTrainerStatus `json:"trainerStatus,omitempty"`

	// buildError says why the controller could not create or update the TrainJob's objects (a
	// missing runtime, an invalid runtime snapshot, a refused write); it is cleared by the next
	// successful build. A status field rather than a condition: the Kubeflow Python SDK reports
	// any condition type it does not know as "Created".
	// +optional
	BuildError *TrainJobBuildError `json:"buildError,omitempty"`

	// disabledFeatures are the optional features (progress reporting, gang scheduling) that could
	// not be set up for this TrainJob, and why: it runs without them. An entry goes away when a
	// later build, before the TrainJob starts, can set the feature up. A status field for the same
	// reason as buildError.
	// +optional
	// +listType=map
	// +listMapKey=name
	// +kubebuilder:validation:MaxItems=8
	DisabledFeatures []TrainJobDisabledFeature `json:"disabledFeatures,omitempty"`
}

// TrainJobDisabledFeature is an optional feature a TrainJob runs without.
type TrainJobDisabledFeature struct {
	// name of the feature: ProgressReporting or GangScheduling.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// message says why the feature is off.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`
}

// TrainJobBuildError is the last error building a TrainJob's objects.
type TrainJobBuildError struct {
	// message is the error.
	// +required
	// +kubebuilder:validation:MaxLength=1024
	Message string `json:"message"`

	// time is when this error was first seen.
	// +required
	Time metav1.Time `json:"time"`
}

// JobStatus counts the Jobs of one replicated job. All six fields are required, as in Kubeflow
// Trainer's schema: the Python SDK rejects an entry that lacks one, and the controller always
// writes them all.
type JobStatus struct {
	// name of the replicated job.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	Name string `json:"name"`

	// ready is the number of Jobs with at least the expected number of ready pods.
	// +required
	// +kubebuilder:validation:Minimum=0
	Ready *int32 `json:"ready,omitempty"`

	// succeeded is the number of Jobs that completed successfully.
	// +required
	// +kubebuilder:validation:Minimum=0
	Succeeded *int32 `json:"succeeded,omitempty"`

	// failed is the number of failed Jobs.
	// +required
	// +kubebuilder:validation:Minimum=0
	Failed *int32 `json:"failed,omitempty"`

	// active is the number of Jobs with at least one active pod.
	// +required
	// +kubebuilder:validation:Minimum=0
	Active *int32 `json:"active,omitempty"`

	// suspended is the number of suspended Jobs.
	// +required
	// +kubebuilder:validation:Minimum=0
	Suspended *int32 `json:"suspended,omitempty"`
}

// TrainJobTrainerStatus is the training progress reported by the training code.
//
// +kubebuilder:validation:XValidation:rule="has(self.lastUpdatedTime)",message="lastUpdatedTime is required when trainerStatus is present"
type TrainJobTrainerStatus struct {
	// progressPercentage is the completed share of the training, from 0 to 100.
	// +optional
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=100
	ProgressPercentage *int32 `json:"progressPercentage,omitempty"`

	// estimatedRemainingSeconds is the training code's estimate of the time left.
	// +optional
	// +kubebuilder:validation:Minimum=0
	EstimatedRemainingSeconds *int32 `json:"estimatedRemainingSeconds,omitempty"`

	// metrics are the latest training metrics, e.g. loss; each update replaces the whole list.
	// +optional
	// +listType=atomic
	// +kubebuilder:validation:MaxItems=256
	Metrics []Metric `json:"metrics,omitempty"`

	// lastUpdatedTime is when the training code sent this status.
	// +optional
	LastUpdatedTime metav1.Time `json:"lastUpdatedTime,omitzero"`
}

// Metric is one named training metric.
type Metric struct {
	// name of the metric, e.g. "loss".
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Name string `json:"name"`

	// value of the metric, as a string so that any number format survives.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=64
	Value string `json:"value"`
}

// UpdateTrainJobStatusRequest is the body of a POST to the status server.
type UpdateTrainJobStatusRequest struct {
	// trainerStatus replaces the TrainJob's status.trainerStatus.
	// +optional
	TrainerStatus *TrainJobTrainerStatus `json:"trainerStatus,omitempty"`
}

// TrainJobList is a list of TrainJobs.
//
// +kubebuilder:object:root=true
type TrainJobList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the list.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the TrainJobs.
	Items []TrainJob `json:"items"`
}
