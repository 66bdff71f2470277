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

package cached

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TestCachedJobSetAnswersAsTheServers is the contract from the reader's side: whatever the
// transform drops, every accessor answers of a cached JobSet what it answers of the JobSet the
// server holds (but NodeJob's index, -1 once the replicated jobs are gone).
func TestCachedJobSetAnswersAsTheServers(t *testing.T) {
	type answers struct {
		Suspended, Finished, Active, NodeJobFound bool
		NodeParallelism                           int32
	}
	node := jobsetv1alpha2.ReplicatedJob{Name: "node", Replicas: 1, Template: batchv1.JobTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](3), Completions: ptr.To[int32](3),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "pytorch"}}}}},
	}}
	initializer := jobsetv1alpha2.ReplicatedJob{Name: "dataset-initializer", Replicas: 1}
	done := []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue}}
	failed := []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetFailed), Status: metav1.ConditionTrue}}
	active := []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 3}}
	cases := map[string]struct {
		suspend    *bool
		jobs       []jobsetv1alpha2.ReplicatedJob
		conditions []metav1.Condition
		status     []jobsetv1alpha2.ReplicatedJobStatus
		want       answers
	}{
		"running":                {jobs: []jobsetv1alpha2.ReplicatedJob{initializer, node}, status: active, want: answers{Active: true, NodeJobFound: true, NodeParallelism: 3}},
		"suspended":              {suspend: ptr.To(true), jobs: []jobsetv1alpha2.ReplicatedJob{node}, want: answers{Suspended: true, NodeJobFound: true, NodeParallelism: 3}},
		"completed":              {jobs: []jobsetv1alpha2.ReplicatedJob{initializer, node}, conditions: done, want: answers{Finished: true, NodeJobFound: true, NodeParallelism: 3}},
		"failed, pods running":   {jobs: []jobsetv1alpha2.ReplicatedJob{node}, conditions: failed, status: active, want: answers{Finished: true, Active: true, NodeJobFound: true, NodeParallelism: 3}},
		"completed, no node job": {jobs: []jobsetv1alpha2.ReplicatedJob{initializer}, conditions: done, want: answers{Finished: true}},
		"completed while suspended": {suspend: ptr.To(true), jobs: []jobsetv1alpha2.ReplicatedJob{node}, conditions: done,
			want: answers{Suspended: true, Finished: true, NodeJobFound: true, NodeParallelism: 3}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			server := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tj"},
				Spec:   jobsetv1alpha2.JobSetSpec{Suspend: tc.suspend, ReplicatedJobs: tc.jobs},
				Status: jobsetv1alpha2.JobSetStatus{Conditions: tc.conditions, ReplicatedJobsStatus: tc.status}}
			ask := func(js *jobsetv1alpha2.JobSet) answers {
				_, p, found := NodeJob(js)
				return answers{Suspended: Suspended(js), Finished: Finished(js), Active: Active(js), NodeJobFound: found, NodeParallelism: p}
			}
			obj, err := Transform(server.DeepCopy())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, ask(server)); diff != "" {
				t.Errorf("the server's JobSet (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, ask(obj.(*jobsetv1alpha2.JobSet))); diff != "" {
				t.Errorf("the cached JobSet (-want,+got):\n%s", diff)
			}
		})
	}
}
