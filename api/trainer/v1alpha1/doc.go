// Package v1alpha1 holds the trainer.kubeflow.org/v1alpha1 API: TrainJob, TrainingRuntime and
// ClusterTrainingRuntime. The JSON shape is wire-compatible with Kubeflow Trainer v2.3, so users'
// YAML, Kueue's TrainJob integration and the Kubeflow Python SDK work unchanged against Gantry.
//
// +kubebuilder:object:generate=true
// +groupName=trainer.kubeflow.org
package v1alpha1
