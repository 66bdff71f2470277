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
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// State is the one word a practitioner reads first. It comes from the TrainJob's conditions,
// spec.suspend, status.jobsStatus and Kueue's Workload, never from pod phases alone: pods lag
// behind, vanish with a deleted JobSet, and say nothing about a job waiting for quota.
type State string

// The states, in the order a job usually passes through them.
const (
	StateQueued     State = "Queued"
	StateSuspended  State = "Suspended"
	StateCreated    State = "Created"
	StateRunning    State = "Running"
	StateRestarting State = "Restarting"
	StateComplete   State = "Complete"
	StateFailed     State = "Failed"
)

// States lists every state, for flag validation and completion.
var States = []State{StateQueued, StateSuspended, StateCreated, StateRunning, StateRestarting, StateComplete, StateFailed}

// ParseState returns the state named s, ignoring case.
func ParseState(s string) (State, error) {
	for _, st := range States {
		if strings.EqualFold(string(st), s) {
			return st, nil
		}
	}
	names := make([]string, len(States))
	for i, st := range States {
		names[i] = string(st)
	}
	return "", fmt.Errorf("unknown state %q: want one of %s", s, strings.Join(names, ", "))
}

// Terminal reports whether a job in this state will never change again.
func (s State) Terminal() bool { return s == StateComplete || s == StateFailed }

// Derived is a state with the sentence that explains it.
type Derived struct {
	State   State
	Message string
}

// statusState is the state the TrainJob's own status and spec say, before its Jobs and pods
// are asked; wl is its Kueue Workload, nil when there is none or Kueue is not installed.
func statusState(tj *trainer.TrainJob, wl *Workload) Derived {
	if outcome, _ := Outcome(&tj.Status); outcome != "" {
		cond := trainer.TrainJobComplete
		if outcome == StateFailed {
			cond = trainer.TrainJobFailed
		}
		return Derived{outcome, meta.FindStatusCondition(tj.Status.Conditions, cond).Message}
	}
	if Suspended(tj) {
		return suspendedState(tj, wl)
	}
	return activeState(tj)
}

// Suspended is spec.suspend, the user's and Kueue's intent. The Suspended condition follows it
// one reconcile later, so it is not asked: a resumed job with a stale condition is not suspended.
func Suspended(tj *trainer.TrainJob) bool {
	return tj.Spec.Suspend != nil && *tj.Spec.Suspend
}

func suspendedState(tj *trainer.TrainJob, wl *Workload) Derived {
	queue, labelled := tj.Labels[QueueLabel]
	if !labelled && wl == nil {
		return Derived{StateSuspended, "spec.suspend is true"}
	}
	switch {
	case wl == nil:
		return Derived{StateQueued, fmt.Sprintf("waiting for Kueue to admit it to queue %q", queue)}
	case !wl.Active:
		return Derived{StateSuspended, fmt.Sprintf("Kueue workload %s is stopped (spec.active=false)", wl.Name)}
	case wl.Admitted:
		return Derived{StateQueued, fmt.Sprintf("admitted to cluster queue %q, starting", wl.ClusterQueue)}
	case wl.Message != "":
		return Derived{StateQueued, wl.Message}
	case labelled:
		return Derived{StateQueued, fmt.Sprintf("waiting in queue %q", queue)}
	default:
		// manageJobsWithoutQueueName, or a parent Kueue manages: no queue to name.
		return Derived{StateQueued, fmt.Sprintf("waiting for Kueue (workload %s)", wl.Name)}
	}
}

// activeState tells apart a job whose pods are not there yet, one that trains and one that
// restarts, from the JobSet's per-replicated-job counts mirrored in status.jobsStatus.
// A build error says why a job has no pods yet; it does not hide pods that run (a build is
// never made again for a running JobSet, so its error there is about a change not applied).
func activeState(tj *trainer.TrainJob) Derived {
	d := countsState(tj)
	if be := tj.Status.BuildError; be != nil && d.State == StateCreated {
		return Derived{StateCreated, be.Message}
	}
	return d
}

func countsState(tj *trainer.TrainJob) Derived {
	var failed []string
	training, initializing := false, ""
	for _, js := range tj.Status.JobsStatus {
		if val(js.Failed) > 0 {
			failed = append(failed, fmt.Sprintf("%s: %d failed", js.Name, val(js.Failed)))
		}
		busy := val(js.Active)+val(js.Ready) > 0
		switch {
		case js.Name == DatasetInitializer || js.Name == ModelInitializer:
			if busy && initializing == "" {
				initializing = js.Name
			}
		case busy || val(js.Succeeded) > 0:
			training = true
		}
	}
	switch {
	case len(failed) > 0:
		return Derived{StateRestarting, strings.Join(failed, ", ")}
	case training:
		return Derived{StateRunning, ""}
	case initializing != "":
		return Derived{StateCreated, "running " + initializing}
	case len(tj.Status.JobsStatus) == 0:
		return Derived{StateCreated, "waiting for the JobSet"}
	default:
		return Derived{StateCreated, "waiting for pods"}
	}
}

func val(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
