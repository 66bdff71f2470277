// Package v1alpha1 holds config.trainer.kubeflow.org/v1alpha1 Configuration, the file the Gantry
// manager reads with --config. It accepts the same document as the Kubeflow Trainer manager.
//
// +kubebuilder:object:generate=true
// +groupName=config.trainer.kubeflow.org
package v1alpha1
