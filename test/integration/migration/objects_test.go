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

package migration

import (
	"fmt"
	"strconv"

	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// JobSet's reason and message for a JobSet whose jobs all completed, which the TrainJob copies.
const (
	jobSetCompletedReason  = "AllJobsCompleted"
	jobSetCompletedMessage = "jobset completed successfully"
)

// createReferenceObjects leaves what a Kubeflow Trainer before v2.3 leaves: runtimes in use
// carrying its finalizer, and TrainJobs with the JobSets and status its controller wrote. One
// runs (its JobSet active), one is suspended (a suspended JobSet, the Suspended condition), one
// completed and its JobSet is gone (deleted by JobSet's TTL).
func createReferenceObjects() {
	gomega.Expect(k8sClient.Create(ctx, referenceClusterRuntime())).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, referenceRuntime())).To(gomega.Succeed())

	running := referenceTrainJob("running", trainer.ClusterTrainingRuntimeKind, "team-torch", false)
	gomega.Expect(k8sClient.Create(ctx, running)).To(gomega.Succeed())
	js := referenceJobSet(running, false)
	gomega.Expect(k8sClient.Create(ctx, js)).To(gomega.Succeed())
	js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: 1, Active: 1}}
	gomega.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
	running.Status.JobsStatus = []trainer.JobStatus{jobStatus("node", 1, 1, 0, 0)}
	gomega.Expect(k8sClient.Status().Update(ctx, running)).To(gomega.Succeed())

	suspended := referenceTrainJob("suspended", trainer.TrainingRuntimeKind, "team-plain", true)
	gomega.Expect(k8sClient.Create(ctx, suspended)).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, referenceJobSet(suspended, true))).To(gomega.Succeed())
	suspended.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobSuspended, "Suspended", "TrainJob is suspended")}
	suspended.Status.JobsStatus = []trainer.JobStatus{jobStatus("node", 0, 0, 0, 1)}
	gomega.Expect(k8sClient.Status().Update(ctx, suspended)).To(gomega.Succeed())

	finished := referenceTrainJob("finished", trainer.ClusterTrainingRuntimeKind, "team-torch", false)
	gomega.Expect(k8sClient.Create(ctx, finished)).To(gomega.Succeed())
	finished.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobComplete, jobSetCompletedReason, jobSetCompletedMessage)}
	finished.Status.JobsStatus = []trainer.JobStatus{jobStatus("node", 0, 0, 1, 0)}
	gomega.Expect(k8sClient.Status().Update(ctx, finished)).To(gomega.Succeed())
}

// completeJobSet does what JobSet's controller does when every job of js succeeded.
func completeJobSet(js *jobsetv1alpha2.JobSet) {
	js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Succeeded: 1}}
	js.Status.Conditions = []metav1.Condition{{
		Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue,
		Reason: jobSetCompletedReason, Message: jobSetCompletedMessage, LastTransitionTime: metav1.Now(),
	}}
	gomega.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
}

// unstructuredField reads a field of obj by path, list items by their index.
func unstructuredField(obj *unstructured.Unstructured, path ...string) (any, bool, error) {
	var cur any = obj.Object
	for _, p := range path {
		switch v := cur.(type) {
		case map[string]any:
			next, ok := v[p]
			if !ok {
				return nil, false, nil
			}
			cur = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i >= len(v) {
				return nil, false, fmt.Errorf("%q does not index a list of %d", p, len(v))
			}
			cur = v[i]
		default:
			return nil, false, fmt.Errorf("%q: not a map or a list", p)
		}
	}
	return cur, true, nil
}
