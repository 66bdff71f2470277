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
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

type logsOptions struct {
	*Options
	opts    jobview.LogOptions
	tail    int64
	since   time.Duration
	local   bool
	workdir string
	kueueNS string
}

func newLogsCommand(o *Options) *cobra.Command {
	lo := &logsOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "logs NAME",
		Short: "Print or follow the logs of a TrainJob's step (node-0 by default)",
		Long: `Print the logs of one step of a TrainJob: node-0 (rank 0) by default, or --step
dataset-initializer, model-initializer, node-<i>, launcher-<i>. --all prints every step, each
line prefixed with [step].

-f waits for the step's pod if it does not exist or has not started yet (up to --pod-timeout),
follows it into its next incarnation when it restarts, and stops when the TrainJob is
Complete or Failed; then the exit code is the job's (0 Complete, 1 Failed). A step with no
pod is an error (exit code 4), not empty output.

A TrainJob Kueue's MultiKueue dispatched runs on a worker cluster: its logs are read there,
through the worker's MultiKueueCluster kubeconfig Secret (in --kueue-namespace), which you must
be allowed to read (else exit code 5). -f waits, up to --pod-timeout, for the job to be
dispatched.

` + ExitCodesHelp,
		Example: `  gantry logs my-job -f
  gantry logs my-job --step dataset-initializer
  gantry logs my-job --all --tail 20 --timestamps`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeJobs,
		RunE:              func(cmd *cobra.Command, args []string) error { return lo.run(cmd.Context(), cmd, args[0]) },
	}
	f := cmd.Flags()
	f.StringVar(&lo.opts.Step, "step", "node-0", "The step to print: dataset-initializer, model-initializer, node-<i> or launcher-<i>.")
	f.BoolVar(&lo.opts.All, "all", false, "Print every step, each line prefixed with [step].")
	f.BoolVarP(&lo.opts.Follow, "follow", "f", false, "Wait for the pod, follow it across restarts and stop when the job ends.")
	f.DurationVar(&lo.opts.PodTimeout, "pod-timeout", 10*time.Minute, "With -f, how long to wait for a pod that does not exist or has not started.")
	f.Int64Var(&lo.tail, "tail", -1, "Lines of recent log to print; -1 prints all.")
	f.DurationVar(&lo.since, "since", 0, "Only lines newer than this duration, e.g. 5m.")
	f.BoolVar(&lo.opts.Timestamps, "timestamps", false, "Start each line with its RFC 3339 timestamp.")
	f.BoolVar(&lo.opts.Prefix, "prefix", false, "Prefix each line with [step] (--all implies it).")
	f.BoolVar(&lo.local, "local", false, "Print a local run's logs (gantry run --local) from its workdir instead.")
	f.StringVar(&lo.workdir, "workdir", "", "With --local, the run's workdir (default "+LocalRunsDir+"/NAME).")
	addKueueNamespaceFlag(cmd, &lo.kueueNS)
	_ = cmd.RegisterFlagCompletionFunc("step", o.completeSteps)
	return cmd
}

func (lo *logsOptions) run(ctx context.Context, cmd *cobra.Command, name string) error {
	if lo.opts.All && cmd.Flags().Changed("step") {
		return usageErrorf("give --step or --all, not both")
	}
	if lo.tail >= 0 {
		lo.opts.Tail = &lo.tail
	} else if lo.tail != -1 {
		return usageErrorf("--tail must be -1 (all) or a number of lines, got %d", lo.tail)
	}
	if lo.since < 0 {
		return usageErrorf("--since must be a positive duration, got %s", lo.since)
	} else if lo.since > 0 {
		lo.opts.Since = &lo.since
	}
	if lo.local {
		return lo.logsLocal(name)
	}
	ns, err := lo.Namespace()
	if err != nil {
		return err
	}
	r, err := lo.Reader()
	if err != nil {
		return err
	}
	r.KueueNamespace = lo.kueueNS
	return lo.follow(ctx, ns, name, lo.opts)
}

// follow prints logs; with Follow the exit code is the job's.
func (o *Options) follow(ctx context.Context, ns, name string, opts jobview.LogOptions) error {
	r, err := o.Reader()
	if err != nil {
		return err
	}
	var cs jobview.CoreClient
	if cs, err = o.Clientset(); err != nil {
		return err
	}
	src := &jobview.APISource{Reader: r, Clientset: cs, Namespace: ns, Name: name, Context: ctx}
	rem, err := o.remote(ctx, r, ns, name, opts)
	if err != nil {
		return err
	}
	if rem != nil {
		src.Pods, src.Clientset = rem.Reader, rem.Core
	}
	defer src.Close()
	tj, err := (&jobview.Follower{Source: src, Out: o.Streams.Out, Opts: opts}).Run(ctx)
	if opts.Follow && tj != nil {
		// Following ends with the job's result, even when the step never got to run.
		if d := trainjob.DeriveState(tj, nil, nil); d.State == trainjob.StateFailed {
			if err != nil {
				_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: %v\n", err)
			}
			return withCode(ExitJobFailed, fmt.Errorf("TrainJob %s failed: %s", name, d.Message))
		}
	}
	if err != nil && rem != nil && !errors.Is(err, jobview.ErrStepNotFound) && !apierrors.IsNotFound(err) {
		err = fmt.Errorf("TrainJob %s runs on worker %s (%s): %w", name, rem.Placement.Worker, multicluster.ReasonMultiKueue, err)
	}
	if err != nil {
		return notFoundJob(err, ns, name)
	}
	return nil
}

// remote finds the worker a job MultiKueue dispatched runs on and its clients; nil for a job
// that runs here. With Follow it waits, up to opts.PodTimeout, for the job to be dispatched.
func (o *Options) remote(ctx context.Context, r *jobview.Reader, ns, name string, opts jobview.LogOptions) (*jobview.Remote, error) {
	var deadline <-chan time.Time
	if opts.PodTimeout > 0 {
		t := time.NewTimer(opts.PodTimeout)
		defer t.Stop()
		deadline = t.C
	}
	for {
		tj, err := r.TrainJob(ctx, ns, name)
		if err != nil {
			return nil, notFoundJob(err, ns, name)
		}
		rem := r.Remote(ctx, tj)
		switch {
		case rem == nil || rem.Reachable():
			return rem, nil
		case rem.Placement.Dispatched():
			return nil, fmt.Errorf("TrainJob %s runs on worker %s (%s); its logs cannot be read there: %w",
				name, rem.Placement.Worker, multicluster.ReasonMultiKueue, rem.Err)
		case trainjob.DeriveState(tj, nil, nil).State.Terminal():
			return nil, withCode(ExitNotFound, fmt.Errorf("TrainJob %s finished without a worker to read its logs on (%s)", name, rem.Placement.Waiting))
		case !opts.Follow:
			return nil, withCode(ExitNotFound, fmt.Errorf("TrainJob %s is not on a worker yet: %s; use -f to wait for it", name, rem.Placement.Waiting))
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-deadline:
			return nil, withCode(ExitTimeout, fmt.Errorf("TrainJob %s was not dispatched to a worker within %s: %s", name, opts.PodTimeout, rem.Placement.Waiting))
		case <-time.After(jobview.Recheck):
		}
	}
}
