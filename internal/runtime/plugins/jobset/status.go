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

package jobset

import (
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Status mirrors the JobSet into a copy of the TrainJob's status: its Completed and Failed
// conditions become Complete and Failed (reason, message and time kept), and jobsStatus is
// replaced by the replicated job status with all six counters set. Everything else is kept. Without
// a JobSet (not created yet, or deleted after the TrainJob finished) the status is unchanged.
func (*JobSet) Status(tj *trainer.TrainJob, js *jobsetv1alpha2.JobSet) (*trainer.TrainJobStatus, error) {
	status := tj.Status.DeepCopy()
	if js == nil {
		return status, nil
	}
	mirror := map[string]string{
		string(jobsetv1alpha2.JobSetCompleted): trainer.TrainJobComplete,
		string(jobsetv1alpha2.JobSetFailed):    trainer.TrainJobFailed,
	}
	for _, c := range js.Status.Conditions {
		typ, ok := mirror[c.Type]
		if !ok || c.Status != metav1.ConditionTrue {
			continue
		}
		apimeta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type:               typ,
			Status:             metav1.ConditionTrue,
			Reason:             c.Reason,
			Message:            c.Message,
			LastTransitionTime: c.LastTransitionTime,
			ObservedGeneration: tj.Generation,
		})
	}
	status.JobsStatus = nil
	for _, r := range js.Status.ReplicatedJobsStatus {
		status.JobsStatus = append(status.JobsStatus, trainer.JobStatus{
			Name:      r.Name,
			Ready:     ptr.To(r.Ready),
			Succeeded: ptr.To(r.Succeeded),
			Failed:    ptr.To(r.Failed),
			Active:    ptr.To(r.Active),
			Suspended: ptr.To(r.Suspended),
		})
	}
	return status, nil
}
