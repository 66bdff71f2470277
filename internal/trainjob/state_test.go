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
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

func cond(t, status, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: msg}
}

func jobs(name string, active, ready, succeeded, failed int32) trainer.JobStatus {
	return trainer.JobStatus{Name: name, Active: &active, Ready: &ready, Succeeded: &succeeded, Failed: &failed,
		Suspended: ptr.To[int32](0)}
}

// TestDeriveState is the state truth table the CLI, the UI and the printer columns agree on.
func TestDeriveState(t *testing.T) {
	queued := map[string]string{QueueLabel: "team-a"}
	cases := []struct {
		name    string
		labels  map[string]string
		suspend bool
		status  trainer.TrainJobStatus
		wl      *Workload
		want    Derived
	}{{
		name: "new, no status yet",
		want: Derived{StateCreated, "waiting for the JobSet"},
	}, {
		name:    "suspended by the user",
		suspend: true,
		status:  trainer.TrainJobStatus{Conditions: []metav1.Condition{cond("Suspended", "True", "Suspended", "TrainJob is suspended")}},
		want:    Derived{StateSuspended, "spec.suspend is true"},
	}, {
		name:    "suspend asked, condition not written yet",
		suspend: true,
		want:    Derived{StateSuspended, "spec.suspend is true"},
	}, {
		name:    "Kueue-managed, no Workload yet",
		labels:  queued,
		suspend: true,
		want:    Derived{StateQueued, `waiting for Kueue to admit it to queue "team-a"`},
	}, {
		name:    "Kueue-managed, waiting for quota",
		labels:  queued,
		suspend: true,
		wl:      &Workload{Name: "trainjob-a-1", Active: true, Message: "couldn't assign flavors to pod set node: insufficient quota"},
		want:    Derived{StateQueued, "couldn't assign flavors to pod set node: insufficient quota"},
	}, {
		name:    "Kueue admitted, not resumed yet",
		labels:  queued,
		suspend: true,
		wl:      &Workload{Name: "trainjob-a-1", Active: true, Admitted: true, ClusterQueue: "cq"},
		want:    Derived{StateQueued, `admitted to cluster queue "cq", starting`},
	}, {
		name:    "Kueue workload stopped",
		labels:  queued,
		suspend: true,
		wl:      &Workload{Name: "trainjob-a-1", Active: false},
		want:    Derived{StateSuspended, "Kueue workload trainjob-a-1 is stopped (spec.active=false)"},
	}, {
		name:   "JobSet created, pods pending",
		status: trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 0, 0)}},
		want:   Derived{StateCreated, "waiting for pods"},
	}, {
		name: "initializer running",
		status: trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{
			jobs("dataset-initializer", 1, 0, 0, 0), jobs("node", 0, 0, 0, 0)}},
		want: Derived{StateCreated, "running dataset-initializer"},
	}, {
		name:   "running",
		status: trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobs("node", 1, 1, 0, 0)}},
		want:   Derived{StateRunning, ""},
	}, {
		name: "resumed: Suspended=False present (sdk#803)",
		status: trainer.TrainJobStatus{
			Conditions: []metav1.Condition{cond("Suspended", "False", "Resumed", "TrainJob is resumed")},
			JobsStatus: []trainer.JobStatus{jobs("node", 1, 1, 0, 0)},
		},
		want: Derived{StateRunning, ""},
	}, {
		name:    "Kueue resumed it, stale Suspended=True condition",
		labels:  queued,
		suspend: false,
		status: trainer.TrainJobStatus{
			Conditions: []metav1.Condition{cond("Suspended", "True", "Suspended", "TrainJob is suspended")},
			JobsStatus: []trainer.JobStatus{jobs("node", 1, 0, 0, 0)},
		},
		want: Derived{StateRunning, ""},
	}, {
		name:   "restarting: a node Job failed",
		status: trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 0, 1)}},
		want:   Derived{StateRestarting, "node: 1 failed"},
	}, {
		name: "complete",
		status: trainer.TrainJobStatus{
			Conditions: []metav1.Condition{cond("Complete", "True", "AllJobsCompleted", "jobset completed successfully")},
			JobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 1, 0)},
		},
		want: Derived{StateComplete, "jobset completed successfully"},
	}, {
		name: "failed after restarts",
		status: trainer.TrainJobStatus{
			Conditions: []metav1.Condition{cond("Failed", "True", "FailedJobs", "jobset failed: node-0 failed")},
			JobsStatus: []trainer.JobStatus{jobs("node", 0, 0, 0, 1)},
		},
		want: Derived{StateFailed, "jobset failed: node-0 failed"},
	}, {
		name: "terminal after its JobSet was deleted (TTL)",
		status: trainer.TrainJobStatus{
			Conditions: []metav1.Condition{cond("Complete", "True", "AllJobsCompleted", "done")},
		},
		want: Derived{StateComplete, "done"},
	}, {
		name:    "failed while suspended (deadline)",
		suspend: true,
		status: trainer.TrainJobStatus{Conditions: []metav1.Condition{
			cond("Suspended", "True", "Suspended", "TrainJob is suspended"),
			cond("Failed", "True", "DeadlineExceeded", "TrainJob exceeded its active deadline")}},
		want: Derived{StateFailed, "TrainJob exceeded its active deadline"},
	}, {
		name:   "build error",
		status: trainer.TrainJobStatus{BuildError: &trainer.TrainJobBuildError{Message: `ClusterTrainingRuntime "x" is not found`}},
		want:   Derived{StateCreated, `ClusterTrainingRuntime "x" is not found`},
	}, {
		name:   "Complete=False is not complete",
		status: trainer.TrainJobStatus{Conditions: []metav1.Condition{cond("Complete", "False", "x", "")}},
		want:   Derived{StateCreated, "waiting for the JobSet"},
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tj := &trainer.TrainJob{
				ObjectMeta: metav1.ObjectMeta{Name: "a", Labels: tc.labels},
				Spec:       trainer.TrainJobSpec{Suspend: ptr.To(tc.suspend)},
				Status:     tc.status,
			}
			if diff := cmp.Diff(tc.want, DeriveState(tj, tc.wl, nil)); diff != "" {
				t.Errorf("DeriveState (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseState(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    State
		wantErr bool
	}{
		{"running", StateRunning, false},
		{"Complete", StateComplete, false},
		{"done", "", true},
	} {
		got, err := ParseState(tc.in)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("ParseState(%q) = %q, %v; want %q, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}
