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

// Package localrun tests gantry run --local with real processes: Debian's python3-torch
// (/usr/bin/torchrun, gloo on CPU) trains a DDP model over 2 nodes x 2 processes. Without
// python3-torch the tests fail with how to install it (make local-run-deps): they never pass
// without running.
package localrun

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"

	"github.com/gantry-ml/gantry/internal/faults"
	"github.com/gantry-ml/gantry/internal/localrun"
	"github.com/gantry-ml/gantry/test/util"
)

const torchrun = "/usr/bin/torchrun"

var gantry struct {
	once sync.Once
	path string
	err  error
}

// gantryBinary builds cmd/gantry once.
func gantryBinary(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(torchrun); err != nil {
		t.Fatalf("%s is missing: these tests need Debian's python3-torch (make local-run-deps, or apt-get install python3-torch)", torchrun)
	}
	gantry.once.Do(func() {
		dir, err := os.MkdirTemp("", "gantry-localrun-")
		if err != nil {
			gantry.err = err
			return
		}
		// With the faults built in: TestStopGuard injects one.
		gantry.path, gantry.err = util.BuildCmd(dir, "gantry", "faults")
	})
	if gantry.err != nil {
		t.Fatal(gantry.err)
	}
	return gantry.path
}

type result struct {
	code           int
	stdout, stderr string
	took           time.Duration
}

// runIn runs gantry in dir with extra environment; a run still going after 2 minutes is killed
// with its steps.
func runIn(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd, stdout, stderr := command(t, dir, env, args...)
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	timer := time.AfterFunc(2*time.Minute, func() { _ = cmd.Process.Kill() })
	err := cmd.Wait()
	if !timer.Stop() {
		t.Errorf("gantry %s was still running after 2 minutes: killed", strings.Join(args, " "))
	}
	r := result{stdout: stdout.String(), stderr: stderr.String(), took: time.Since(start)}
	if ee, ok := errors.AsType[*exec.ExitError](err); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}

func command(t *testing.T, dir string, env []string, args ...string) (*exec.Cmd, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(gantryBinary(t), args...)
	cmd.Dir = dir
	// Neither PET_REDIRECTS nor PET_TEE is set, as a new user would run it: the run sets them
	// when the torch found has the defect of torch 1.x under Python 3.11 (localrun/torch.go).
	cmd.Env = append(os.Environ(), "OUT_DIR="+dir)
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	return cmd, &stdout, &stderr
}

// jobDir is a folder with the test's TrainJob and training script. At the end of the test, every
// process group its run recorded is killed, so a failed test leaves no process behind.
func jobDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Cleanup(func() {
		for _, name := range []string{"ddp", "stop", "elastic"} {
			if rec, err := localrun.ReadRecord(filepath.Join(dir, ".gantry", "runs", name)); err == nil {
				for _, s := range rec.Steps {
					if s.Pid != 0 {
						_ = syscall.Kill(-s.Pid, syscall.SIGKILL)
					}
				}
			}
		}
	})
	for _, f := range []string{"job.yaml", "ddp.py", "stop.yaml", "elastic.yaml", "elastic.py"} {
		data, err := os.ReadFile(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

type rankOutput struct {
	Rank        int     `json:"rank"`
	GroupRank   int     `json:"group_rank"`
	LocalRank   int     `json:"local_rank"`
	Loss0       float64 `json:"loss0"`
	LossN       float64 `json:"lossN"`
	Params      string  `json:"params"`
	WrongStatus *int    `json:"wrong_token_status"`
}

// checkTrained asserts test 2's criteria on a run's outputs.
func checkTrained(t *testing.T, dir string, r result) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("gantry run exited %d\nstdout:\n%s\nstderr:\n%s\nnode-0's log:\n%s", r.code, r.stdout, r.stderr, tail(filepath.Join(dir, ".gantry", "runs", "ddp", "logs", "node-0.log")))
	}
	var outs []rankOutput
	for rank := range 4 {
		data, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("out-%d.json", rank)))
		if err != nil {
			t.Fatalf("rank %d wrote nothing: %v", rank, err)
		}
		var o rankOutput
		if err := json.Unmarshal(data, &o); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, o)
	}
	var ranks, groups []int
	for _, o := range outs {
		ranks, groups = append(ranks, o.Rank), append(groups, o.GroupRank)
		if o.LossN >= 0.5*o.Loss0 {
			t.Errorf("rank %d: loss %g -> %g, want below half", o.Rank, o.Loss0, o.LossN)
		}
		if o.Params != outs[0].Params {
			t.Errorf("rank %d's parameters differ from rank 0's: %s, %s", o.Rank, o.Params, outs[0].Params)
		}
	}
	if diff := cmp.Diff([]int{0, 1, 2, 3}, ranks); diff != "" {
		t.Errorf("ranks (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0, 0, 1, 1}, groups); diff != "" {
		t.Errorf("GROUP_RANK of ranks 0-3 (-want,+got):\n%s", diff)
	}
}

// Test 2 and 4: a real DDP run of 2 nodes x 2 processes completes, and its progress shows.
func TestDistributedRun(t *testing.T) {
	dir := jobDir(t)
	r := runIn(t, dir, nil, "run", "--local", "-f", "job.yaml", "--runtime-source", "shipped")
	checkTrained(t, dir, r)
	// Debian's torch 1.13 on Python 3.11 has the defect: the run says once that it mends it.
	if n := strings.Count(r.stderr, "set PET_REDIRECTS=9:1 PET_TEE=9:1"); n != 1 {
		t.Errorf("stderr notes the PET_REDIRECTS/PET_TEE mend %d times, want once:\n%s", n, r.stderr)
	}
	t.Logf("gantry run --local, 2 nodes x 2 processes, 200 DDP steps: %.1f s", r.took.Seconds())
	if r.took > 90*time.Second {
		t.Errorf("the run took %s, want under 90 s", r.took)
	}

	got := runIn(t, dir, nil, "get", "--local", "ddp", "-o", "json")
	var rec localrun.Record
	if err := json.Unmarshal([]byte(got.stdout), &rec); err != nil {
		t.Fatalf("gantry get --local -o json: %v\n%s%s", err, got.stdout, got.stderr)
	}
	if rec.State != localrun.StateComplete || rec.Reports != 3 || rec.TrainerStatus == nil ||
		rec.TrainerStatus.ProgressPercentage == nil || *rec.TrainerStatus.ProgressPercentage != 100 {
		t.Errorf("run.json: state %s, %d reports, trainerStatus %+v; want Complete, 3, 100%%", rec.State, rec.Reports, rec.TrainerStatus)
	}
	table := runIn(t, dir, nil, "get", "--local", "ddp")
	if !strings.Contains(table.stdout, "Progress:   100% loss=") {
		t.Errorf("gantry get --local does not show the last progress:\n%s", table.stdout)
	}
	var rank0 rankOutput
	data, _ := os.ReadFile(filepath.Join(dir, "out-0.json"))
	_ = json.Unmarshal(data, &rank0)
	if rank0.WrongStatus == nil || *rank0.WrongStatus != 403 {
		t.Errorf("a report with a wrong token was answered %v, want 403", rank0.WrongStatus)
	}
}

// Test 3: rank 3 exits 3 before the all-reduce; the run exits 1 within 30 s, leaves no process,
// and the failing step's log holds the traceback.
func TestFailureStopsTheRun(t *testing.T) {
	dir := jobDir(t)
	r := runIn(t, dir, []string{"FAIL_RANK=3"}, "run", "--local", "-f", "job.yaml", "--runtime-source", "shipped")
	if r.code != 1 {
		t.Fatalf("exit code %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	if r.took > 30*time.Second {
		t.Errorf("the failed run took %s, want under 30 s", r.took)
	}
	// Rank 3's exit breaks the others' all-reduce: whichever node ends first is the job's failure.
	if !regexp.MustCompile(`error: step node-[01] exited with code 1 \(log: `).MatchString(r.stderr) {
		t.Errorf("stderr does not name the failing step and its log:\n%s", r.stderr)
	}
	expectNoProcessLeft(t, filepath.Join(dir, ".gantry", "runs", "ddp"))
	logs := runIn(t, dir, nil, "logs", "--local", "ddp", "--step", "node-1")
	if logs.code != 0 || !strings.Contains(logs.stdout, "rank 3 fails on purpose") || !strings.Contains(logs.stdout, "Traceback") ||
		!strings.Contains(logs.stdout, "ChildFailedError") {
		t.Errorf("gantry logs --local --step node-1 (exit %d) lacks the failure and its traceback:\n%s%s", logs.code, logs.stdout, logs.stderr)
	}
}

// TestStopEndsTheOtherSteps: node 1 fails at once while node 0 would run 10 minutes; the run
// stops node 0 and exits 1 within 30 s, with no process left.
func TestStopEndsTheOtherSteps(t *testing.T) {
	dir := jobDir(t)
	r := runIn(t, dir, nil, "run", "--local", "-f", "stop.yaml", "--runtime-source", "shipped")
	if r.code != 1 || r.took > 30*time.Second {
		t.Fatalf("exit code %d after %s, want 1 within 30 s\nstderr:\n%s", r.code, r.took, r.stderr)
	}
	if !strings.Contains(r.stderr, "error: step node-1 exited with code 3 (log: ") {
		t.Errorf("stderr does not name the failing step:\n%s", r.stderr)
	}
	rec := expectNoProcessLeft(t, filepath.Join(dir, ".gantry", "runs", "stop"))
	if s := rec.Steps[0]; s.Name != "node-0" || s.Signal != "terminated" {
		t.Errorf("node-0 ended with %+v, want SIGTERM (terminated)", s)
	}
}

// TestStopGuard shows TestStopEndsTheOtherSteps able to fail: with the stop broken on purpose
// (faults.LocalRunNoStop) the same run is still going after 30 s.
func TestStopGuard(t *testing.T) {
	dir := jobDir(t)
	cmd, _, stderr := command(t, dir, []string{faults.EnvVar + "=" + faults.LocalRunNoStop},
		"run", "--local", "-f", "stop.yaml", "--runtime-source", "shipped")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		t.Errorf("with the stop broken the run ended within 30 s (%v): the stop test would not catch it\n%s", err, stderr.String())
		return
	case <-time.After(30 * time.Second):
	}
	_ = cmd.Process.Kill()
	if err := <-done; err == nil {
		t.Error("the killed run exited 0")
	}
}

// TestInterruptStopsEveryStep: Ctrl-C (SIGINT) while both steps run ends them all; the run is
// recorded Stopped and exits 7.
func TestInterruptStopsEveryStep(t *testing.T) {
	dir := jobDir(t)
	cmd, _, stderr := command(t, dir, []string{"HANG=1"}, "run", "--local", "-f", "stop.yaml", "--runtime-source", "shipped")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	workdir := filepath.Join(dir, ".gantry", "runs", "stop")
	g := gomega.NewWithT(t)
	g.Eventually(func() int {
		rec, err := localrun.ReadRecord(workdir)
		if err != nil {
			return 0
		}
		started := 0
		for _, s := range rec.Steps {
			if s.Pid != 0 {
				started++
			}
		}
		return started
	}, "20s").Should(gomega.Equal(2), "both steps start")
	start := time.Now()
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	// 7, not 1: the job did not fail, the run was stopped (gantry run --help, exit codes).
	if ee, ok := errors.AsType[*exec.ExitError](err); !ok || ee.ExitCode() != 7 {
		t.Errorf("after SIGINT: %v, want exit code 7\n%s", err, stderr.String())
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("SIGINT took %s to end the run", took)
	}
	rec := expectNoProcessLeft(t, workdir)
	if rec.State != localrun.StateStopped {
		t.Errorf("run.json says %s, want %s", rec.State, localrun.StateStopped)
	}
}

// expectNoProcessLeft checks that no process of any step's group is left and every step has
// its exit code in run.json.
func expectNoProcessLeft(t *testing.T, workdir string) *localrun.Record {
	t.Helper()
	rec, err := localrun.ReadRecord(workdir)
	if err != nil {
		t.Fatal(err)
	}
	g := gomega.NewWithT(t)
	for _, s := range rec.Steps {
		// The run killed the group (SIGKILL) as its leader ended; the kernel ends its members at once.
		g.Eventually(func() []int { return groupMembers(s.Pid) }, "2s").Should(gomega.BeEmpty(), "processes of step %s's group are left", s.Name)
		if s.ExitCode == nil {
			t.Errorf("step %s has no exit code in run.json", s.Name)
		}
	}
	return rec
}

// Test 5: two runs at once get different ports and both train.
func TestConcurrentRuns(t *testing.T) {
	dirs := []string{jobDir(t), jobDir(t)}
	results := make([]result, 2)
	var wg sync.WaitGroup
	for i, dir := range dirs {
		wg.Go(func() {
			results[i] = runIn(t, dir, nil, "run", "--local", "-f", "job.yaml", "--runtime-source", "shipped")
		})
	}
	wg.Wait()
	for i, dir := range dirs {
		checkTrained(t, dir, results[i])
	}
}

// tail is the end of a log, for a failure's message.
func tail(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	return string(data[max(0, len(data)-2000):])
}

// groupMembers lists the processes still in the process group pgid.
func groupMembers(pgid int) []int {
	if pgid == 0 {
		return nil
	}
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if g, err := syscall.Getpgid(pid); err == nil && g == pgid && !zombie(pid) && !slices.Contains(pids, pid) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// zombie reports whether pid has exited and waits for its parent (init, for an orphan) to reap it.
func zombie(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	// pid (comm) state ...: comm may hold spaces, so the state follows the last ")".
	rest := string(stat[bytes.LastIndexByte(stat, ')')+1:])
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}
