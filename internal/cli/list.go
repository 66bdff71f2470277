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
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

type listOptions struct {
	*Options
	out           *outputFlags
	allNamespaces bool
	selector      string
	runtime       string
	states        []string
	watch         bool
}

func newListCommand(o *Options) *cobra.Command {
	lo := &listOptions{Options: o}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List TrainJobs with their state, size and progress",
		Long: `List TrainJobs: NAME STATE RUNTIME NODES GPUS PROGRESS ETA AGE. -o wide adds QUEUE,
RESTARTS and MESSAGE; MESSAGE names the worker of a job Kueue's MultiKueue dispatched. GPUS
counts the devices (GPUs or other extended resources) per node.

STATE is one of Queued, Suspended, Created, Running, Restarting, Complete, Failed, derived from
the TrainJob's conditions, spec.suspend, status.jobsStatus and Kueue's Workload.

"gantry list optimizationjobs" lists OptimizationJobs instead.`,
		Example: `  gantry list
  gantry list -A --state Running,Queued
  gantry list --runtime torch-distributed -o name
  gantry list -w`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return lo.run(cmd.Context()) },
	}
	lo.out = addOutputFlags(cmd, true)
	cmd.Flags().BoolVarP(&lo.allNamespaces, "all-namespaces", "A", false, "List the TrainJobs of every namespace.")
	cmd.Flags().StringVarP(&lo.selector, "selector", "l", "", "Label selector, as in kubectl (e.g. team=a,app!=b).")
	cmd.Flags().StringVar(&lo.runtime, "runtime", "", "Only TrainJobs that use this runtime.")
	cmd.Flags().StringSliceVar(&lo.states, "state", nil, "Only TrainJobs in these states (comma-separated).")
	cmd.Flags().BoolVarP(&lo.watch, "watch", "w", false, "After the list, print each TrainJob again when it changes.")
	_ = cmd.RegisterFlagCompletionFunc("runtime", o.completeRuntimes)
	_ = cmd.RegisterFlagCompletionFunc("state", completeStates)
	cmd.AddCommand(newListOptimizationsCommand(o))
	return cmd
}

func (lo *listOptions) listOpts() (jobview.ListOptions, error) {
	opts := jobview.ListOptions{Selector: lo.selector, Runtime: lo.runtime}
	if lo.selector != "" {
		if _, err := parseLabelSelector(lo.selector); err != nil {
			return opts, err
		}
	}
	for _, s := range lo.states {
		st, err := trainjob.ParseState(s)
		if err != nil {
			return opts, withCode(ExitUsage, fmt.Errorf("--state: %w", err))
		}
		opts.States = append(opts.States, st)
	}
	if !lo.allNamespaces {
		ns, err := lo.Namespace()
		if err != nil {
			return opts, err
		}
		opts.Namespace = ns
	}
	return opts, nil
}

func (lo *listOptions) run(ctx context.Context) error {
	opts, err := lo.listOpts()
	if err != nil {
		return err
	}
	if lo.watch && !lo.out.table() {
		return usageErrorf("--watch prints tables only; leave out -o %s", lo.out.format())
	}
	r, err := lo.Reader()
	if err != nil {
		return err
	}
	list, err := r.List(ctx, opts)
	if err != nil {
		return err
	}
	jobs := list.Items
	if !lo.out.table() {
		return lo.out.printDocument(lo.Streams.Out, listDocument(jobs), jobNames(jobs))
	}
	restarts := map[string]int32{}
	if lo.out.wide() {
		restarts = lo.restarts(ctx, r, opts.Namespace)
	}
	tw := tableWriter(lo.Streams.Out)
	if !lo.out.noHeaders {
		lo.header(tw)
	}
	for i := range jobs {
		lo.row(tw, &jobs[i], restarts)
	}
	if len(jobs) == 0 && !lo.watch {
		lo.noneFound(opts.Namespace)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if lo.watch {
		return lo.watchJobs(ctx, r, opts, list.ResourceVersion, restarts)
	}
	return nil
}

func (lo *listOptions) noneFound(ns string) {
	if ns == "" {
		_, _ = fmt.Fprintln(lo.Streams.ErrOut, "No TrainJobs found.")
		return
	}
	_, _ = fmt.Fprintf(lo.Streams.ErrOut, "No TrainJobs found in namespace %s.\n", ns)
}

func (lo *listOptions) header(w io.Writer) {
	cols := []string{"NAME", lo.stateHeader(), "RUNTIME", "NODES", "GPUS", "PROGRESS", "ETA", "AGE"}
	if lo.allNamespaces {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	if lo.out.wide() {
		cols = append(cols, "QUEUE", "RESTARTS", "MESSAGE")
	}
	row(w, cols...)
}

func (lo *listOptions) row(w io.Writer, s *jobview.Summary, restarts map[string]int32) {
	nodes := "-"
	if s.Nodes > 0 {
		nodes = strconv.Itoa(int(s.Nodes))
	}
	gpus := "-"
	if s.DevicesPerNode > 0 {
		gpus = strconv.FormatInt(s.DevicesPerNode, 10)
	}
	progress, eta := "-", "-"
	if p := s.Progress; p != nil {
		if p.Percent != nil {
			progress = fmt.Sprintf("%d%%", *p.Percent)
		}
		if p.ETASeconds != nil && !s.State.Terminal() {
			eta = (time.Duration(*p.ETASeconds) * time.Second).String()
		}
	}
	cols := []string{s.Name, lo.stateText(s.State), s.Runtime.Name, nodes, gpus, progress, eta, age(lo.Now(), s.Created.Time)}
	if lo.allNamespaces {
		cols = append([]string{s.Namespace}, cols...)
	}
	if lo.out.wide() {
		cols = append(cols, orDash(s.Queue), strconv.Itoa(int(restarts[s.Namespace+"/"+s.Name])), orDash(listMessage(s)))
	}
	row(w, cols...)
}

// listMessage is -o wide's MESSAGE: the state's sentence, after the worker of a job MultiKueue
// dispatched.
func listMessage(s *jobview.Summary) string {
	p := s.MultiKueue
	if !p.Dispatched() {
		return s.Message
	}
	if s.Message == "" {
		return "on worker " + p.Worker
	}
	return "on worker " + p.Worker + ": " + s.Message
}

// restarts reads JobSets' status.restarts for -o wide: the TrainJob does not mirror it.
func (lo *listOptions) restarts(ctx context.Context, r *jobview.Reader, ns string) map[string]int32 {
	out := map[string]int32{}
	list := &jobset.JobSetList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
		return out
	}
	for _, js := range list.Items {
		out[js.Namespace+"/"+js.Name] = js.Status.Restarts
	}
	return out
}

// watchJobs prints a row for each change, as `kubectl get -w` does.
func (lo *listOptions) watchJobs(ctx context.Context, r *jobview.Reader, opts jobview.ListOptions, rv string, restarts map[string]int32) error {
	lopts := []client.ListOption{client.InNamespace(opts.Namespace)}
	if opts.Selector != "" {
		sel, err := parseLabelSelector(opts.Selector)
		if err != nil {
			return err
		}
		lopts = append(lopts, client.MatchingLabelsSelector{Selector: sel})
	}
	return watchFrom(ctx, r.Client, &trainer.TrainJobList{}, rv, lopts, func(ev watch.Event) error {
		tj, ok := ev.Object.(*trainer.TrainJob)
		if !ok {
			return nil
		}
		s := r.Summarize(ctx, tj)
		if !opts.Matches(&s) {
			return nil
		}
		tw := tableWriter(lo.Streams.Out)
		lo.row(tw, &s, restarts)
		return tw.Flush()
	})
}

// listDocument is `list -o json|yaml`: the summaries in a versioned list.
func listDocument(jobs []jobview.Summary) map[string]any {
	items := make([]any, len(jobs))
	for i := range jobs {
		items[i] = jobs[i]
	}
	return map[string]any{"apiVersion": jobview.APIVersion, "kind": jobview.Kind + "List", "items": items}
}

func jobNames(jobs []jobview.Summary) []string {
	names := make([]string, len(jobs))
	for i := range jobs {
		names[i] = "trainjob.trainer.kubeflow.org/" + jobs[i].Name
	}
	return names
}

func parseLabelSelector(s string) (labels.Selector, error) {
	sel, err := labels.Parse(s)
	if err != nil {
		return nil, usageErrorf("--selector %q: %v", s, err)
	}
	return sel, nil
}
