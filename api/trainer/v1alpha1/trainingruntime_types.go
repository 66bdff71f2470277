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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
)

// ClusterTrainingRuntime is a runtime blueprint that TrainJobs in any namespace can reference.
//
// +genclient
// +genclient:nonNamespaced
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:scope=Cluster,shortName=ctr
type ClusterTrainingRuntime struct {
	metav1.TypeMeta `json:",inline"`

	// metadata of the ClusterTrainingRuntime.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the ClusterTrainingRuntime. Optional in the schema, as in Kubeflow Trainer's; the
	// webhook refuses a runtime without one.
	// +optional
	Spec TrainingRuntimeSpec `json:"spec,omitzero"`
}

// ClusterTrainingRuntimeList is a list of ClusterTrainingRuntimes.
//
// +kubebuilder:object:root=true
type ClusterTrainingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the list.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the ClusterTrainingRuntimes.
	Items []ClusterTrainingRuntime `json:"items"`
}

// TrainingRuntime is a runtime blueprint that TrainJobs in its own namespace can reference.
//
// +genclient
// +kubebuilder:object:root=true
// +kubebuilder:storageversion
// +kubebuilder:resource:shortName=tr;trt
type TrainingRuntime struct {
	metav1.TypeMeta `json:",inline"`

	// metadata of the TrainingRuntime.
	// +optional
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// spec of the TrainingRuntime. Optional in the schema, as in Kubeflow Trainer's; the webhook
	// refuses a runtime without one.
	// +optional
	Spec TrainingRuntimeSpec `json:"spec,omitzero"`
}

// TrainingRuntimeList is a list of TrainingRuntimes.
//
// +kubebuilder:object:root=true
type TrainingRuntimeList struct {
	metav1.TypeMeta `json:",inline"`
	// metadata of the list.
	// +optional
	metav1.ListMeta `json:"metadata,omitempty"`
	// items are the TrainingRuntimes.
	Items []TrainingRuntime `json:"items"`
}

// TrainingRuntimeSpec is shared by both runtime kinds: the ML framework policy, gang scheduling
// and the JobSet template every TrainJob of this runtime starts from.
//
// +kubebuilder:validation:MinProperties=1
type TrainingRuntimeSpec struct {
	// mlPolicy selects the ML framework and its settings.
	// +optional
	MLPolicy *MLPolicy `json:"mlPolicy,omitempty"`

	// podGroupPolicy enables gang scheduling of the TrainJob's pods.
	// +optional
	PodGroupPolicy *PodGroupPolicy `json:"podGroupPolicy,omitempty"`

	// template is the JobSet template of the runtime. Optional in the schema, as in Kubeflow
	// Trainer's; the webhook refuses a runtime without one.
	// +optional
	Template JobSetTemplateSpec `json:"template,omitzero"`
}

// JobSetTemplateSpec is a JobSet template: metadata for the JobSet object and its spec.
//
// +kubebuilder:validation:MinProperties=1
type JobSetTemplateSpec struct {
	// metadata labels and annotations are copied onto the JobSet.
	// +optional
	Metadata metav1.ObjectMeta `json:"metadata,omitzero"`

	// spec of the JobSet.
	// +optional
	Spec jobsetv1alpha2.JobSetSpec `json:"spec,omitzero"`
}

// MLPolicy is the framework policy of a runtime: the default node count and at most one
// framework source.
//
// The rule's text is Kubeflow Trainer's to the character (the missing space before has(self.flux)
// included), so that the two CRDs compare equal.
//
// +kubebuilder:validation:XValidation:rule="[has(self.torch), has(self.mpi), has(self.jax), has(self.xgboost),has(self.flux)].filter(x, x).size() <= 1",message="Only one of the policy can be configured"
type MLPolicy struct {
	// numNodes is the default number of training nodes; a TrainJob may override it. Unset means 1.
	// +optional
	NumNodes *int32 `json:"numNodes,omitempty"`

	MLPolicySource `json:",inline"`
}

// MLPolicySource is the framework of a runtime; at most one member may be set, and none means
// plain ML (no framework-specific environment).
type MLPolicySource struct {
	// torch configures PyTorch distributed training through torchrun.
	// +optional
	Torch *TorchMLPolicySource `json:"torch,omitempty"`

	// mpi configures MPI training (OpenMPI): SSH keys, hostfile and launcher.
	// +optional
	MPI *MPIMLPolicySource `json:"mpi,omitempty"`

	// jax configures JAX distributed training.
	// +optional
	JAX *JAXMLPolicySource `json:"jax,omitempty"`

	// xgboost configures XGBoost distributed training through its collective tracker.
	// +optional
	XGBoost *XGBoostMLPolicySource `json:"xgboost,omitempty"`

	// flux configures the Flux Framework for HPC workloads.
	// +optional
	Flux *FluxMLPolicySource `json:"flux,omitempty"`
}

// TorchMLPolicySource configures PyTorch.
type TorchMLPolicySource struct {
	// envInjection adds the PET_* environment to containers other than the node container.
	// +optional
	EnvInjection *TorchEnvInjection `json:"envInjection,omitempty"`
}

// TorchEnvInjection lists extra containers that receive the PET_* environment.
type TorchEnvInjection struct {
	// targets are the replicated jobs and containers that receive the environment.
	// +optional
	// +listType=map
	// +listMapKey=jobName
	// +kubebuilder:validation:MaxItems=16
	Targets []TorchEnvInjectionTarget `json:"targets,omitempty"`
}

// TorchEnvInjectionTarget names containers of one replicated job.
type TorchEnvInjectionTarget struct {
	// jobName is the replicated job.
	// +required
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=253
	JobName string `json:"jobName"`

	// containerNames are the containers of that job that receive the environment.
	// +required
	// +listType=set
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=8
	// +kubebuilder:validation:items:MaxLength=63
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, c == 'node')",message="containerNames must not include the main node container because PET_* envs are always injected into it"
	ContainerNames []string `json:"containerNames"`
}

// MPIImplementation is an MPI implementation.
//
// +kubebuilder:validation:Enum=OpenMPI;""
type MPIImplementation string

// MPI implementations. Only OpenMPI is accepted by the schema; the others are reserved names.
const (
	MPIImplementationOpenMPI MPIImplementation = "OpenMPI"
	MPIImplementationIntel   MPIImplementation = "Intel"
	MPIImplementationMPICH   MPIImplementation = "MPICH"
)

// MPIMLPolicySource configures MPI.
type MPIMLPolicySource struct {
	// numProcPerNode is the number of MPI slots per node.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="NumProcPerNode in mpiPolicy must be >= 1"
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`

	// mpiImplementation is the MPI implementation; only OpenMPI is supported.
	// +optional
	// +kubebuilder:default="OpenMPI"
	MPIImplementation *MPIImplementation `json:"mpiImplementation,omitempty"`

	// sshAuthMountPath is where the SSH keys are mounted in the launcher and node containers.
	// +optional
	// +kubebuilder:default="/root/.ssh"
	// +kubebuilder:validation:MaxLength=4096
	SSHAuthMountPath *string `json:"sshAuthMountPath,omitempty"`

	// runLauncherAsNode makes the launcher also a training node (it counts towards numNodes).
	// +optional
	// +kubebuilder:default=false
	RunLauncherAsNode *bool `json:"runLauncherAsNode,omitempty"`
}

// JAXMLPolicySource configures JAX; it has no settings yet.
type JAXMLPolicySource struct{}

// XGBoostMLPolicySource configures XGBoost; it has no settings yet.
type XGBoostMLPolicySource struct{}

// FluxMLPolicySource configures the Flux Framework.
type FluxMLPolicySource struct {
	// numProcPerNode is the number of processes per node.
	// +optional
	// +kubebuilder:default=1
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="NumProcPerNode in fluxPolicy must be >= 1"
	NumProcPerNode *int32 `json:"numProcPerNode,omitempty"`
}

// PodGroupPolicy enables gang scheduling.
type PodGroupPolicy struct {
	PodGroupPolicySource `json:",inline"`
}

// PodGroupPolicySource is the gang scheduler to use; only one member is meant to be set.
type PodGroupPolicySource struct {
	// coscheduling uses the scheduler-plugins coscheduling PodGroup.
	// +optional
	Coscheduling *CoschedulingPodGroupPolicySource `json:"coscheduling,omitempty"`

	// volcano uses the Volcano scheduler's PodGroup.
	// +optional
	Volcano *VolcanoPodGroupPolicySource `json:"volcano,omitempty"`
}

// CoschedulingPodGroupPolicySource configures the coscheduling plugin.
type CoschedulingPodGroupPolicySource struct {
	// scheduleTimeoutSeconds is how long the gang may wait to be scheduled as a whole.
	// +optional
	// +kubebuilder:default=60
	ScheduleTimeoutSeconds *int32 `json:"scheduleTimeoutSeconds,omitempty"`
}

// VolcanoPodGroupPolicySource configures Volcano.
type VolcanoPodGroupPolicySource struct {
	// networkTopology constrains how far apart in the network the gang's pods may be placed.
	// +optional
	NetworkTopology *volcanov1beta1.NetworkTopologySpec `json:"networkTopology,omitempty"`
}
