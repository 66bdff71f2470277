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

// Well-known labels and annotations. Their values are part of the wire contract: runtimes written
// for Kubeflow Trainer, the Python SDK and Kueue all use them verbatim.
const (
	// AncestorLabel marks the replicated job of a runtime template that a TrainJob field overrides.
	// It is set on the Job template of a replicated job, with one of the Ancestor* values.
	AncestorLabel = "trainer.kubeflow.org/trainjob-ancestor-step"

	// FrameworkLabel names the framework of a runtime; the Python SDK skips runtimes without it.
	FrameworkLabel = "trainer.kubeflow.org/framework"

	// WebhookValidationLabel set to WebhookValidationDisabled keeps a runtime away from the
	// validating webhook, so built-in runtimes can be installed before the webhook is up.
	WebhookValidationLabel = "trainer.kubeflow.org/webhook-validation"
	// WebhookValidationDisabled is the only meaningful value of WebhookValidationLabel.
	WebhookValidationDisabled = "disabled"

	// SupportLabel set to SupportDeprecated marks a ClusterTrainingRuntime as deprecated; admission
	// then warns on new TrainJobs that reference it.
	SupportLabel = "trainer.kubeflow.org/support"
	// SupportDeprecated is the value of SupportLabel for deprecated runtimes.
	SupportDeprecated = "deprecated"

	// ResourceInUseFinalizer was put on runtimes by Kubeflow Trainer before v2.3. Gantry never adds
	// it and removes it where it finds it, so runtimes can be deleted while TrainJobs use them.
	ResourceInUseFinalizer = "trainer.kubeflow.org/resource-in-use"
)

// Values of AncestorLabel.
const (
	AncestorDatasetInitializer = "dataset-initializer"
	AncestorModelInitializer   = "model-initializer"
	AncestorTrainer            = "trainer"
)

// Values of spec.managedBy.
const (
	// ManagedByTrainJobController is the default: this controller reconciles the TrainJob.
	ManagedByTrainJobController = "trainer.kubeflow.org/trainjob-controller"
	// ManagedByMultiKueue hands the TrainJob to Kueue's MultiKueue, which runs it on a worker
	// cluster and mirrors its status back; this controller leaves it alone.
	ManagedByMultiKueue = "kueue.x-k8s.io/multikueue"
)

// Conventional spec.runtimePatches[].manager values.
const (
	RuntimePatchManagerSDK   = "trainer.kubeflow.org/kubeflow-sdk"
	RuntimePatchManagerKueue = "kueue.x-k8s.io/manager"
)

// Default runtime reference, as the CRD schema applies it.
const (
	DefaultRuntimeRefAPIGroup = "trainer.kubeflow.org"
	DefaultRuntimeRefKind     = ClusterTrainingRuntimeKind
)

// Condition types of TrainJob.status.conditions. These are all the types the controller writes:
// the Kubeflow Python SDK reports "Created" instead of "Running" when it sees any other type.
const (
	TrainJobSuspended = "Suspended"
	TrainJobComplete  = "Complete"
	TrainJobFailed    = "Failed"
)

// Condition reasons and messages written by the controller. Complete and Failed conditions
// mirrored from the JobSet keep the JobSet's own reason and message.
const (
	TrainJobSuspendedReason  = "Suspended"
	TrainJobSuspendedMessage = "TrainJob is suspended"

	TrainJobResumedReason  = "Resumed"
	TrainJobResumedMessage = "TrainJob is resumed"

	TrainJobDeadlineExceededReason  = "DeadlineExceeded"
	TrainJobDeadlineExceededMessage = "TrainJob exceeded its active deadline"

	// TrainJobRuntimeNotSupportedReason comes with the message "unsupported runtime: <GroupKind>".
	TrainJobRuntimeNotSupportedReason = "TrainingRuntimeNotSupported"
)
