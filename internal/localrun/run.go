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
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Runner runs a plan: one process group per step, the replicated jobs in dependsOn order, and
// the first failing step stops the others.
type Runner struct {
	Plan *Plan
	// Status, when set, serves the progress reports of the run.
	Status *StatusEndpoint
	// Follow, when set, receives every log line prefixed with its step, and the progress.
	Follow io.Writer
	// Dir is the working directory of steps whose container names none.
	Dir string
}

// JobFailedError is a run that ended Failed: a step exited non-zero.
type JobFailedError struct{ Message string }

func (e *JobFailedError) Error() string { return e.Message }

// errStopping refuses to start a step once the run is stopping.
var errStopping = errors.New("the run is stopping")

// ErrStopped is a run ended by its context (Ctrl-C) before it finished.
var ErrStopped = errors.New("stopped before the job finished: every step's processes were ended")

// proc is one started step.
type proc struct {
	step *Step
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
	code int
	// left: the step failed, and the elastic run goes on without it.
	left bool
}

type run struct {
	*Runner
	// root is the workdir: every file the run writes is opened through it.
	root  *os.Root
	rec   *recorder
	out   *followWriter
	mu    sync.Mutex
	procs []*proc
	// stopping is set by stopAll: no step starts after it.
	stopping bool
	failure  chan struct{}
	failed   string
	once     sync.Once
	// left names the elastic steps that failed while enough nodes remained.
	left []string
}

// Run prepares the workdir, runs the plan and returns the record; the error is a
// *JobFailedError, ErrStopped, or what kept the run from starting.
func (r *Runner) Run(ctx context.Context) (*Record, error) {
	p := r.Plan
	root, err := p.prepare()
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	x := &run{Runner: r, root: root, rec: &recorder{root: root}, failure: make(chan struct{})}
	if r.Follow != nil {
		x.out = &followWriter{w: r.Follow}
	}
	now := time.Now()
	err = x.rec.update(func(rec *Record) {
		*rec = Record{APIVersion: RecordAPIVersion, Kind: RecordKind, TrainJob: p.TrainJob, Namespace: p.Namespace, Workdir: p.Workdir, State: StateRunning, Started: now}
		for _, s := range p.Steps {
			rec.Steps = append(rec.Steps, StepRecord{Name: s.Name, Command: s.Command, Log: LogPath(p.Workdir, s.Name), Skipped: s.Skip})
		}
	})
	if err != nil {
		return nil, err
	}
	statusCtx, stopStatus := context.WithCancel(context.Background())
	defer stopStatus()
	if r.Status != nil {
		go func() { _ = r.Status.Serve(statusCtx, x.progress) }()
	}
	runErr := x.schedule(ctx)
	finished := time.Now()
	_ = x.rec.update(func(rec *Record) {
		rec.Finished = &finished
		switch {
		case runErr == nil && len(x.left) > 0:
			rec.State, rec.Message = StateComplete, "completed; left the elastic run: "+strings.Join(x.left, ", ")
		case runErr == nil:
			rec.State, rec.Message = StateComplete, "every step completed"
		case errors.Is(runErr, ErrStopped):
			rec.State, rec.Message = StateStopped, runErr.Error()
		default:
			rec.State, rec.Message = StateFailed, runErr.Error()
		}
	})
	rec := x.rec.snapshot()
	return &rec, runErr
}

// prepare makes the workdir's folders and writes the volumes' files, all through an os.Root of
// the workdir: a symlink placed in it (by a step of an earlier run, say) cannot lead a write out
// of it, nor can a path of the plan.
func (p *Plan) prepare() (*os.Root, error) {
	if err := os.MkdirAll(p.Workdir, 0o755); err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(p.Workdir)
	if err != nil {
		return nil, err
	}
	if err := p.writeVolumes(root); err != nil {
		_ = root.Close()
		return nil, err
	}
	return root, nil
}

func (p *Plan) writeVolumes(root *os.Root) error {
	if err := root.MkdirAll(logsDir, 0o755); err != nil {
		return fmt.Errorf("the logs' folder: %w", err)
	}
	for _, v := range p.Volumes {
		dir, err := filepath.Rel(p.Workdir, v.Dir)
		if err != nil || !filepath.IsLocal(dir) {
			return fmt.Errorf("volume %q: its folder %s is not within the workdir %s", v.Name, v.Dir, p.Workdir)
		}
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("volume %q: %w", v.Name, err)
		}
		for _, f := range v.Files {
			path := filepath.Join(dir, f.Path)
			if !filepath.IsLocal(path) {
				return fmt.Errorf("volume %q: file %s is not within the volume's folder", v.Name, f.Path)
			}
			if err := root.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return fmt.Errorf("volume %q, file %s: %w", v.Name, f.Path, err)
			}
			if err := root.WriteFile(path, []byte(f.Content), os.FileMode(f.Mode&0o777)); err != nil {
				return fmt.Errorf("volume %q, file %s: %w", v.Name, f.Path, err)
			}
		}
	}
	return nil
}

// schedule starts each replicated job once its dependencies allow, and waits for the end: every
// step completed, one failed, or ctx done.
func (x *run) schedule(ctx context.Context) error {
	started, completed := map[string]chan struct{}{}, map[string]chan struct{}{}
	var order []string
	for _, s := range x.Plan.Steps {
		if _, ok := started[s.ReplicatedJob]; !ok {
			started[s.ReplicatedJob], completed[s.ReplicatedJob] = make(chan struct{}), make(chan struct{})
			order = append(order, s.ReplicatedJob)
		}
	}
	var wg sync.WaitGroup
	for _, rj := range order {
		wg.Go(func() { x.runReplicatedJob(ctx, rj, started, completed) })
	}
	all := make(chan struct{})
	go func() {
		for _, rj := range order {
			select {
			case <-completed[rj]:
			case <-x.failure:
				return
			case <-ctx.Done():
				return
			}
		}
		close(all)
	}()
	var err error
	select {
	case <-all:
	case <-x.failure:
		err = &JobFailedError{Message: x.failed}
	case <-ctx.Done():
		err = ErrStopped
	}
	x.stopAll()
	wg.Wait()
	return err
}

func (x *run) runReplicatedJob(ctx context.Context, rj string, started, completed map[string]chan struct{}) {
	var steps []*Step
	for i := range x.Plan.Steps {
		if x.Plan.Steps[i].ReplicatedJob == rj {
			steps = append(steps, &x.Plan.Steps[i])
		}
	}
	for _, d := range steps[0].After {
		wait := completed[d.ReplicatedJob]
		if d.Status == "Ready" {
			wait = started[d.ReplicatedJob]
		}
		if wait == nil {
			continue // a replicated job without pods (replicas: 0) is ready and complete at once
		}
		select {
		case <-wait:
		case <-x.failure:
			return
		case <-ctx.Done():
			return
		}
	}
	var procs []*proc
	for _, s := range steps {
		pr, err := x.start(s)
		if errors.Is(err, errStopping) {
			return
		}
		if err != nil {
			x.fail(fmt.Sprintf("step %s could not start: %v", s.Name, err))
			return
		}
		procs = append(procs, pr)
	}
	close(started[rj])
	// A failing step fails the run as it exits (wait), whichever step of the job it is.
	for _, pr := range procs {
		if <-pr.done; pr.code != 0 && !pr.left {
			return
		}
	}
	close(completed[rj])
}

func (x *run) fail(message string) {
	x.once.Do(func() {
		x.failed = message
		close(x.failure)
	})
}

// start runs a step's command in a process group of its own, its output in its log.
func (x *run) start(s *Step) (*proc, error) {
	pr := &proc{step: s, done: make(chan struct{})}
	if s.Skip != "" {
		close(pr.done)
		return pr, nil
	}
	log, err := x.root.Create(filepath.Join(logsDir, s.Name+".log"))
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(s.Command[0], s.Command[1:]...) //nolint:gosec // the TrainJob's own command, run as the user asked
	cmd.Env = mergeEnv(os.Environ(), s.Env)
	cmd.Dir = s.WorkingDir
	if cmd.Dir == "" {
		cmd.Dir = x.Dir
	}
	cmd.Stdout, cmd.Stderr = log, log
	if x.out != nil {
		w := io.MultiWriter(log, x.out.step(s.Name))
		cmd.Stdout, cmd.Stderr = w, w
		cmd.WaitDelay = time.Second // a daemon holding the pipe must not hold the run
	}
	newProcessGroup(cmd)
	// Started under the lock stopAll takes, so a step is either stopped by it or never started.
	x.mu.Lock()
	if x.stopping {
		x.mu.Unlock()
		_ = log.Close()
		return nil, errStopping
	}
	if err := cmd.Start(); err != nil {
		x.mu.Unlock()
		_ = log.Close()
		return nil, err
	}
	pr.cmd, pr.log = cmd, log
	x.procs = append(x.procs, pr)
	x.mu.Unlock()
	startedAt := time.Now()
	_ = x.rec.update(func(rec *Record) {
		st := rec.step(s.Name)
		st.Pid, st.Started = cmd.Process.Pid, &startedAt
	})
	go x.wait(pr)
	return pr, nil
}

func (x *run) wait(pr *proc) {
	err := pr.cmd.Wait()
	// The step's group ends with its leader, as a pod's processes end with its container.
	killGroup(pr.cmd.Process.Pid)
	_ = pr.log.Close()
	if x.out != nil {
		x.out.flush(pr.step.Name)
	}
	code, signal := exitStatus(pr.cmd, err)
	pr.code = code
	finished := time.Now()
	_ = x.rec.update(func(rec *Record) {
		st := rec.step(pr.step.Name)
		st.Finished, st.ExitCode, st.Signal = &finished, &code, signal
	})
	if code != 0 && !x.leave(pr) {
		x.fail(fmt.Sprintf("step %s exited with code %d (log: %s)", pr.step.Name, code, LogPath(x.Plan.Workdir, pr.step.Name)))
	}
	close(pr.done)
}

// leave lets a failed node of an elastic run go while at least the minimum of nodes remain:
// torchrun's rendezvous goes on with them, as JobSet would on a cluster while the job runs.
func (x *run) leave(pr *proc) bool {
	e := x.Plan.Elastic
	if e == nil || pr.step.ReplicatedJob != e.ReplicatedJob {
		return false
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.stopping {
		return false // stopped by the run, not gone on its own
	}
	nodes := 0
	for _, s := range x.Plan.Steps {
		if s.ReplicatedJob == e.ReplicatedJob {
			nodes++
		}
	}
	if nodes-len(x.left)-1 < e.MinNodes {
		return false
	}
	x.left = append(x.left, pr.step.Name)
	pr.left = true
	if x.out != nil {
		x.out.line(pr.step.Name, fmt.Sprintf("gantry: %s left the elastic run (exit %d); %d of at least %d nodes go on",
			pr.step.Name, pr.code, nodes-len(x.left), e.MinNodes))
	}
	return true
}

// stopAll ends every running step: SIGTERM to its group, then SIGKILL after its grace period.
func (x *run) stopAll() {
	x.mu.Lock()
	x.stopping = true
	procs := append([]*proc(nil), x.procs...)
	x.mu.Unlock()
	if noStopFault() {
		x.waitAll()
		return
	}
	var wg sync.WaitGroup
	for _, pr := range procs {
		select {
		case <-pr.done:
			continue
		default:
		}
		wg.Go(func() {
			terminateGroup(pr.cmd.Process.Pid)
			select {
			case <-pr.done:
			case <-time.After(time.Duration(pr.step.GraceSeconds) * time.Second):
				killGroup(pr.cmd.Process.Pid)
				<-pr.done
			}
		})
	}
	wg.Wait()
}

// waitAll waits for every started step to end by itself.
func (x *run) waitAll() {
	x.mu.Lock()
	procs := append([]*proc(nil), x.procs...)
	x.mu.Unlock()
	for _, pr := range procs {
		<-pr.done
	}
}

// progress records a report, and prints it when following.
func (x *run) progress(status *trainer.TrainJobTrainerStatus) {
	_ = x.rec.update(func(rec *Record) {
		rec.TrainerStatus = status.DeepCopy()
		rec.Reports++
	})
	if x.out != nil {
		x.out.line("progress", FormatProgress(status))
	}
}

// FormatProgress is a report on one line: "40% loss=0.5 eta 120s".
func FormatProgress(s *trainer.TrainJobTrainerStatus) string {
	var parts []string
	if s.ProgressPercentage != nil {
		parts = append(parts, fmt.Sprintf("%d%%", *s.ProgressPercentage))
	}
	for _, m := range s.Metrics {
		parts = append(parts, m.Name+"="+m.Value)
	}
	if s.EstimatedRemainingSeconds != nil {
		parts = append(parts, fmt.Sprintf("eta %ds", *s.EstimatedRemainingSeconds))
	}
	return strings.Join(parts, " ")
}

func (rec *Record) step(name string) *StepRecord {
	for i := range rec.Steps {
		if rec.Steps[i].Name == name {
			return &rec.Steps[i]
		}
	}
	rec.Steps = append(rec.Steps, StepRecord{Name: name})
	return &rec.Steps[len(rec.Steps)-1]
}

// mergeEnv is this machine's environment with the step's on top, as a container's image env
// with the pod's on top.
func mergeEnv(base []string, env []EnvVar) []string {
	out := make([]string, 0, len(base)+len(env))
	set := map[string]bool{}
	for _, e := range env {
		set[e.Name] = true
	}
	for _, kv := range base {
		if name, _, _ := strings.Cut(kv, "="); !set[name] {
			out = append(out, kv)
		}
	}
	for _, e := range env {
		out = append(out, e.Name+"="+e.Value)
	}
	return out
}

// maxPartial bounds the text of a step kept waiting for its line's end.
const maxPartial = 64 << 10

// followWriter prints whole lines of several steps, each prefixed with its step.
type followWriter struct {
	mu      sync.Mutex
	w       io.Writer
	partial map[string]string
}

type stepWriter struct {
	f    *followWriter
	name string
}

func (f *followWriter) step(name string) io.Writer { return stepWriter{f: f, name: name} }

func (s stepWriter) Write(p []byte) (int, error) {
	f := s.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.partial == nil {
		f.partial = map[string]string{}
	}
	text := f.partial[s.name] + string(p)
	complete := text[:strings.LastIndexByte(text, '\n')+1]
	f.partial[s.name] = text[len(complete):]
	// A progress bar redraws with \r and no \n: past maxPartial its text is printed as a line.
	if len(f.partial[s.name]) > maxPartial {
		complete += f.partial[s.name] + "\n"
		f.partial[s.name] = ""
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(complete, "\n"), "\n") {
		if complete != "" {
			_, _ = fmt.Fprintf(f.w, "[%s] %s\n", s.name, line)
		}
	}
	return len(p), nil
}

func (f *followWriter) flush(name string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rest := f.partial[name]; rest != "" {
		_, _ = fmt.Fprintf(f.w, "[%s] %s\n", name, rest)
		delete(f.partial, name)
	}
}

func (f *followWriter) line(name, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = fmt.Fprintf(f.w, "[%s] %s\n", name, text)
}
