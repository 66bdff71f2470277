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

package jobview

import (
	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// The state and Kueue facts moved to internal/trainjob, their one home. These names keep the
// command line compiling while it moves to them; nothing new should use them.
type State = trainjob.State

const (
	StateQueued     = trainjob.StateQueued
	StateSuspended  = trainjob.StateSuspended
	StateCreated    = trainjob.StateCreated
	StateRunning    = trainjob.StateRunning
	StateRestarting = trainjob.StateRestarting
	StateComplete   = trainjob.StateComplete
	StateFailed     = trainjob.StateFailed
	QueueLabel      = trainjob.QueueLabel
	JobUIDLabel     = trainjob.WorkloadJobUIDLabel
)

// States lists every state (trainjob.States).
var States = trainjob.States

// ParseState is trainjob.ParseState.
func ParseState(s string) (State, error) { return trainjob.ParseState(s) }

// DeriveState is trainjob.DeriveState without the Jobs and pods.
func DeriveState(tj *trainer.TrainJob, wl *trainjob.Workload) trainjob.Derived {
	return trainjob.DeriveState(tj, wl, nil)
}
