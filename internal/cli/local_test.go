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

package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/localrun"
)

// localRun writes the workdir of a finished local run of "mnist": run.json and node-0's log.
func localRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	started := testNow.Add(-time.Minute)
	finished := started.Add(12340 * time.Millisecond)
	log := localrun.LogPath(dir, "node-0")
	if err := os.MkdirAll(filepath.Dir(log), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(log, []byte("epoch 1\nepoch 2\nepoch 3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	rec := localrun.Record{APIVersion: localrun.RecordAPIVersion, Kind: localrun.RecordKind, TrainJob: "mnist",
		Namespace: "default", Workdir: dir, State: localrun.StateComplete, Started: started, Finished: &finished,
		Steps: []localrun.StepRecord{
			{Name: "dataset-initializer", Log: localrun.LogPath(dir, "dataset-initializer"), Skipped: "no dataset"},
			{Name: "node-0", Command: []string{"python", "train.py"}, Log: log, Pid: 4242, Started: &started, Finished: &finished, ExitCode: ptr.To(0)},
		},
		TrainerStatus: &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](100), Metrics: []trainer.Metric{{Name: "loss", Value: "0.1"}}},
		Reports:       3,
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, localrun.RecordFile), data, 0o600); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestLocalRun covers get and logs --local, which read a local run's workdir, not the cluster.
func TestLocalRun(t *testing.T) {
	dir := localRun(t)
	cases := map[string]struct {
		args []string
		want result
	}{
		"get --local": {
			args: []string{"get", "mnist", "--local", "--workdir", dir},
			want: result{Stdout: strings.ReplaceAll(`Name:       mnist (local run in DIR)
State:      Complete
Started:    2026-01-01T11:59:00Z
Duration:   12.3s
Progress:   100% loss=0.1 (3 reports)
Steps:
  STEP                 PID   EXIT     DURATION  LOG
  dataset-initializer  -     skipped  -         DIR/logs/dataset-initializer.log
  node-0               4242  0        12.3s     DIR/logs/node-0.log
`, "DIR", dir)},
		},
		"get --local -o jsonpath": {
			args: []string{"get", "mnist", "--local", "--workdir", dir, "-o", "jsonpath={.kind} {.state} {.steps[1].pid}"},
			want: result{Stdout: "LocalRun Complete 4242"},
		},
		"get --local -o name": {
			args: []string{"get", "mnist", "--local", "--workdir", dir, "-o", "name"},
			want: result{Stdout: "run/mnist\n"},
		},
		"logs --local": {
			args: []string{"logs", "mnist", "--local", "--workdir", dir},
			want: result{Stdout: "epoch 1\nepoch 2\nepoch 3\n"},
		},
		"logs --local --tail": {
			args: []string{"logs", "mnist", "--local", "--workdir", dir, "--tail", "2"},
			want: result{Stdout: "epoch 2\nepoch 3\n"},
		},
		"logs --local --tail 0": {
			args: []string{"logs", "mnist", "--local", "--workdir", dir, "--tail", "0"},
			want: result{},
		},
		"logs --local --all: skipped steps print nothing": {
			args: []string{"logs", "mnist", "--local", "--workdir", dir, "--all"},
			want: result{Stdout: "[node-0] epoch 1\n[node-0] epoch 2\n[node-0] epoch 3\n"},
		},
		"logs --local: a step the run lacks": {
			args: []string{"logs", "mnist", "--local", "--workdir", dir, "--step", "node-1"},
			want: failed(ExitNotFound, `the local run of "mnist" has no step "node-1"; its steps: dataset-initializer, node-0`),
		},
		"logs --local: no run": {
			args: []string{"logs", "mnist", "--local", "--workdir", filepath.Join(dir, "none")},
			want: failed(ExitNotFound, `no local run of "mnist" in `+filepath.Join(dir, "none")+`: start one with gantry run --local, or give its --workdir`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, fixture{unreachable: true}.run(t, tc.args...))
		})
	}
}
