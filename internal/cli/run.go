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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-ml/gantry/internal/localrun"
	"github.com/gantry-ml/gantry/internal/render"
)

// LocalRunsDir holds the workdirs of local runs, one per TrainJob name, under the current folder.
const LocalRunsDir = ".gantry/runs"

type runOptions struct {
	*Options
	files         []string
	local         bool
	workdir       string
	dryRun        bool
	output        string
	follow        bool
	runtimeSource string
}

func newRunCommand(o *Options) *cobra.Command {
	r := &runOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "run --local -f FILE",
		Short: "Run a TrainJob on this machine, rendered exactly as the controller would",
		Long: `Run a TrainJob as local processes: the same render as the controller and gantry render
(every plugin, the same env: PET_*, initializers, progress reporting), then one process group per
pod, the replicated jobs in dependsOn order.

The runtime comes from the files (-f), else the cluster of your kubeconfig (read only), else the
runtimes Gantry ships (--runtime-source picks one). What a machine without a cluster needs is
rewritten, and --dry-run lists every rewrite: pod DNS names become 127.0.0.1, container ports
free loopback ports chosen for the run, volume mount paths folders of the workdir. Images are not
used. A status server on 127.0.0.1 with a CA and a token of the run's own takes the progress
reports, so the SDK's calls and the Hugging Face callback work here too.

Logs go to WORKDIR/logs/<step>.log (--follow also prints them, each line prefixed with its
step); WORKDIR/run.json records the steps, their pids and exit codes and the last progress, read
by "gantry get --local" and "gantry logs --local". The first step that fails stops the others
(SIGTERM, then SIGKILL after the pod's grace period); Ctrl-C stops every step.

Exit codes: 0 the job completed, 1 a step failed, 2 the input is wrong, 4 the runtime is
nowhere to be found, 7 the run was stopped (Ctrl-C) or could not start.`,
		Example: `  gantry run --local -f job.yaml --dry-run
  gantry run --local -f job.yaml -f runtime.yaml --follow
  gantry get --local my-job`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return r.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringArrayVarP(&r.files, "filename", "f", nil, "A file with the TrainJob, and optionally its runtime (repeatable; - is standard input).")
	f.BoolVar(&r.local, "local", false, "Run on this machine (required: to run on the cluster, use gantry train or kubectl apply).")
	f.StringVar(&r.workdir, "workdir", "", "Where the volumes, logs and run.json go (default "+LocalRunsDir+"/<name>).")
	f.BoolVar(&r.dryRun, "dry-run", false, "Print the plan (steps, commands, every rewrite of the render) and run nothing.")
	f.StringVarP(&r.output, "output", "o", "", "With --dry-run: json prints the whole plan, env included.")
	f.BoolVar(&r.follow, "follow", false, "Print every step's log lines and the progress reports as they come.")
	f.StringVar(&r.runtimeSource, "runtime-source", "auto", "Where a runtime missing from -f comes from: auto (the cluster, else the shipped runtimes), cluster or shipped.")
	return cmd
}

func (r *runOptions) run(ctx context.Context) error {
	if err := r.validate(); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	in, err := r.read(ctx)
	if err != nil {
		return err
	}
	tj := in.TrainJob
	ep, err := localrun.NewStatusEndpoint(tj.Namespace, tj.Name)
	if err != nil {
		return err
	}
	defer func() { _ = ep.Close() }()
	in.StatusServerCA = ep.CA
	plan, err := r.plan(ctx, in, ep)
	if err != nil {
		return err
	}
	if r.dryRun {
		return r.printPlan(plan)
	}
	// Every way the terminal ends the command stops the steps (they run in their own process
	// groups, which a hang-up does not reach); a closed pipe on --follow's output does not stop
	// the run.
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	signal.Ignore(syscall.SIGPIPE)
	defer signal.Reset(syscall.SIGPIPE)
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	runner := &localrun.Runner{Plan: plan, Status: ep, Dir: cwd}
	if r.follow {
		runner.Follow = r.Streams.Out
	}
	for _, w := range plan.Warnings {
		_, _ = fmt.Fprintf(r.Streams.ErrOut, "note: %s\n", w)
	}
	rec, err := runner.Run(ctx)
	if rec != nil {
		_, _ = fmt.Fprintf(r.Streams.Out, "TrainJob %s: %s in %s (%s)\n", tj.Name, rec.State,
			rec.Finished.Sub(rec.Started).Round(100*time.Millisecond), plan.Workdir)
	}
	if _, failed := errors.AsType[*localrun.JobFailedError](err); failed {
		return withCode(ExitJobFailed, err)
	}
	return err
}

func (r *runOptions) validate() error {
	if !r.local {
		return usageErrorf("gantry run runs on this machine only: give --local (gantry train submits to the cluster)")
	}
	if len(r.files) == 0 {
		return usageErrorf("give the TrainJob with -f FILE")
	}
	if r.output != "" && (r.output != "json" || !r.dryRun) {
		return usageErrorf(`-o: only "json", with --dry-run`)
	}
	switch r.runtimeSource {
	case "auto", "cluster", "shipped":
	default:
		return usageErrorf(`--runtime-source must be "auto", "cluster" or "shipped", got %q`, r.runtimeSource)
	}
	return nil
}

// read decodes the files and finds the runtime.
func (r *runOptions) read(ctx context.Context) (*render.Input, error) {
	sources, closeAll, err := openSources(r.files, r.Streams.In)
	defer closeAll()
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	// A TrainJob that names no namespace is in -n's, else the kubeconfig context's, as kubectl
	// would create it; without a usable kubeconfig, "default".
	namespace, err := r.Namespace()
	if err != nil {
		namespace = ""
	}
	in, err := render.ReadFinding(sources, namespace, r.runtimeFinder(ctx, r.runtimeSource))
	if render.IsInputError(err) {
		return nil, withCode(ExitUsage, err)
	}
	return in, err
}

// plan validates and renders as gantry render does, then expands the objects into steps.
func (r *runOptions) plan(ctx context.Context, in *render.Input, ep *localrun.StatusEndpoint) (*localrun.Plan, error) {
	rt, err := render.NewRuntimeWithStatus(true)
	if err != nil {
		return nil, err
	}
	if err := r.admit(ctx, rt, in); err != nil {
		return nil, err
	}
	objs, err := render.Objects(ctx, rt, in)
	if err != nil {
		return nil, err
	}
	workdir := r.workdir
	if workdir == "" {
		workdir = filepath.Join(LocalRunsDir, in.TrainJob.Name)
	}
	if workdir, err = filepath.Abs(workdir); err != nil {
		return nil, err
	}
	return localrun.NewPlan(objs, localrun.Options{
		Workdir: workdir, FreePort: freeLoopbackPort, StatusURL: ep.URL, StatusToken: ep.Token,
	})
}

func (r *runOptions) printPlan(plan *localrun.Plan) error {
	if r.output == "json" {
		data, err := json.MarshalIndent(plan, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(r.Streams.Out, "%s\n", data)
		return err
	}
	return plan.Print(r.Streams.Out)
}

// handedOut are the ports freeLoopbackPort gave: the kernel may offer a closed one again.
var handedOut = struct {
	sync.Mutex
	ports map[int32]bool
}{ports: map[int32]bool{}}

// freeLoopbackPort asks the kernel for a free port on 127.0.0.1 that this run has not been
// given yet.
func freeLoopbackPort() (int32, error) {
	handedOut.Lock()
	defer handedOut.Unlock()
	for range 100 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := int32(ln.Addr().(*net.TCPAddr).Port) //nolint:gosec // a port fits
		_ = ln.Close()
		if !handedOut.ports[port] {
			handedOut.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("no free loopback port that this run was not given already")
}

// localWorkdir is the workdir of gantry get/logs --local: --workdir, else the run's default.
func localWorkdir(workdir, name string) string {
	if workdir != "" {
		return workdir
	}
	return filepath.Join(LocalRunsDir, name)
}

// readLocalRecord reads a local run's record, with an error naming what to do when there is none.
func readLocalRecord(workdir, name string) (*localrun.Record, error) {
	dir := localWorkdir(workdir, name)
	rec, err := localrun.ReadRecord(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, withCode(ExitNotFound, fmt.Errorf("no local run of %q in %s: start one with gantry run --local, or give its --workdir", name, dir))
	}
	return rec, err
}
