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

package localrun

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Record's document type.
const (
	RecordAPIVersion = "gantry.dev/v1"
	RecordKind       = "LocalRun"
)

// RecordFile is the run's record in its workdir, read by gantry get --local and logs --local.
const RecordFile = "run.json"

// Run states in the record: a TrainJob's states (internal/trainjob), the words gantry list and
// the UI use, and one a cluster never shows.
const (
	StateRunning  = trainjob.StateRunning
	StateComplete = trainjob.StateComplete
	StateFailed   = trainjob.StateFailed
	// StateStopped is a run ended by a signal (Ctrl-C) before it finished: on a cluster the
	// TrainJob would have been deleted, which has no state.
	StateStopped trainjob.State = "Stopped"
)

// Record is what run.json holds: the run's state, each step's process and exit code, and the
// last progress report.
type Record struct {
	// APIVersion and Kind make run.json a versioned document (gantry.dev/v1 LocalRun) whose
	// fields only grow within a version, as the CLI's views.
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	TrainJob   string         `json:"trainJob"`
	Namespace  string         `json:"namespace"`
	Workdir    string         `json:"workdir"`
	State      trainjob.State `json:"state"`
	Message    string         `json:"message,omitempty"`
	Started    time.Time      `json:"started"`
	Finished   *time.Time     `json:"finished,omitempty"`
	Steps      []StepRecord   `json:"steps"`
	// TrainerStatus is the last progress report, as status.trainerStatus would hold it.
	TrainerStatus *trainer.TrainJobTrainerStatus `json:"trainerStatus,omitempty"`
	// Reports counts the progress reports accepted.
	Reports int `json:"reports"`
}

// StepRecord is one step's process.
type StepRecord struct {
	Name     string     `json:"name"`
	Command  []string   `json:"command"`
	Log      string     `json:"log"`
	Pid      int        `json:"pid,omitempty"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
	ExitCode *int       `json:"exitCode,omitempty"`
	// Signal names the signal that ended the process, when one did.
	Signal  string `json:"signal,omitempty"`
	Skipped string `json:"skipped,omitempty"`
}

// logsDir is the workdir's folder of step logs.
const logsDir = "logs"

// LogPath is where a step's output goes.
func LogPath(workdir, step string) string {
	return filepath.Join(workdir, logsDir, step+".log")
}

// ReadRecord reads workdir/run.json.
func ReadRecord(workdir string) (*Record, error) {
	data, err := os.ReadFile(filepath.Join(workdir, RecordFile))
	if err != nil {
		return nil, err
	}
	rec := &Record{}
	if err := json.Unmarshal(data, rec); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(workdir, RecordFile), err)
	}
	return rec, nil
}

// recorder keeps the record and writes it whole (a new file renamed over the old) on each change,
// so a reader never sees half of it.
type recorder struct {
	mu sync.Mutex
	// root is the workdir, through which the record is written.
	root *os.Root
	rec  Record
}

func (r *recorder) update(change func(*Record)) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	change(&r.rec)
	data, err := json.MarshalIndent(&r.rec, "", "  ")
	if err != nil {
		return err
	}
	tmp := RecordFile + ".tmp"
	if err := r.root.WriteFile(tmp, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the run's record: %w", err)
	}
	return r.root.Rename(tmp, RecordFile)
}

func (r *recorder) snapshot() Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	rec := r.rec
	rec.Steps = append([]StepRecord(nil), r.rec.Steps...)
	return rec
}
