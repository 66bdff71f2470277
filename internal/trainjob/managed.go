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

package trainjob

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Kueue's names a TrainJob carries when Kueue manages it.
const (
	// QueueLabel puts a TrainJob in a Kueue LocalQueue.
	QueueLabel = "kueue.x-k8s.io/queue-name"
	// PrebuiltWorkloadLabel marks the copy MultiKueue creates on a worker cluster: the manager
	// cluster's Workload admitted it. A label, or in Kueue v0.19 an annotation (PrebuiltWorkload).
	PrebuiltWorkloadLabel = "kueue.x-k8s.io/prebuilt-workload-name"
	// WorkloadJobUIDLabel is on each Kueue Workload, with the UID of the job it stands for.
	WorkloadJobUIDLabel = "kueue.x-k8s.io/job-uid"
	// MultiKueueOriginLabel is on each copy MultiKueue creates on a worker cluster, naming the
	// manager it came from; unlike the prebuilt-workload label, users do not set it.
	MultiKueueOriginLabel = "kueue.x-k8s.io/multikueue-origin"
)

// DispatchedByMultiKueue reports whether tj is a manager cluster's TrainJob that Kueue's
// MultiKueue runs on a worker: nothing is built for it where it is.
func DispatchedByMultiKueue(tj *trainer.TrainJob) bool {
	return ptr.Deref(tj.Spec.ManagedBy, "") == trainer.ManagedByMultiKueue
}

// PrebuiltWorkload names the Kueue Workload made ahead for tj (MultiKueue's copy on a worker),
// "" for none. Kueue v0.19 writes it as an annotation (its WorkloadIdentifierAnnotations gate, on
// by default), earlier versions as a label of the same key.
func PrebuiltWorkload(tj *trainer.TrainJob) string {
	if name := tj.Annotations[PrebuiltWorkloadLabel]; name != "" {
		return name
	}
	return tj.Labels[PrebuiltWorkloadLabel]
}

// MultiKueueWorkerCopy reports whether tj is the copy MultiKueue made on a worker cluster:
// Gantry runs it, and Kueue deletes it once the manager has its outcome.
func MultiKueueWorkerCopy(tj *trainer.TrainJob) bool {
	_, ok := tj.Labels[MultiKueueOriginLabel]
	return ok
}

// Kueue's Workload, read as metadata or unstructured: Gantry does not depend on Kueue's Go
// module, and a cluster without Kueue has no such kind.
var (
	WorkloadGVK     = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "Workload"}
	WorkloadListGVK = WorkloadGVK.GroupVersion().WithKind("WorkloadList")
)

// ManagedByGantry reports whether Gantry's controller runs tj: spec.managedBy unset or naming
// the controller Gantry stands in for. Any other manager (MultiKueue) builds and reports it.
func ManagedByGantry(tj *trainer.TrainJob) bool {
	return ptr.Deref(tj.Spec.ManagedBy, trainer.ManagedByTrainJobController) == trainer.ManagedByTrainJobController
}

// SizeOwner names who, other than the user, decided the size tj runs at, "" when nobody did:
// another controller (spec.managedBy), or Kueue, which admitted it against a quota. Kueue is
// found by its queue label, by the label of MultiKueue's worker copy, or, whatever the labels
// say, by a Workload of tj (hasWorkload: Kueue's manageJobsWithoutQueueName, or a parent Kueue
// manages, admit a TrainJob that has no queue label).
func SizeOwner(tj *trainer.TrainJob, hasWorkload bool) string {
	switch {
	case !ManagedByGantry(tj):
		return fmt.Sprintf("%s (spec.managedBy)", *tj.Spec.ManagedBy)
	case tj.Labels[QueueLabel] != "":
		return fmt.Sprintf("Kueue (queue %q)", tj.Labels[QueueLabel])
	case PrebuiltWorkload(tj) != "":
		return fmt.Sprintf("Kueue (MultiKueue workload %q)", PrebuiltWorkload(tj))
	case MultiKueueWorkerCopy(tj):
		return fmt.Sprintf("Kueue (MultiKueue, from %q)", tj.Labels[MultiKueueOriginLabel])
	case hasWorkload:
		return "Kueue (a Workload of this TrainJob)"
	}
	return ""
}
