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

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/optimization"
)

type listOptimizationsOptions struct {
	*Options
	out           *outputFlags
	allNamespaces bool
	selector      string
}

// newListOptimizationsCommand is `gantry list optimizationjobs`: a subcommand, so `gantry list`
// and its columns stay the TrainJobs' own.
func newListOptimizationsCommand(o *Options) *cobra.Command {
	lo := &listOptimizationsOptions{Options: o}
	cmd := &cobra.Command{
		Use:     "optimizationjobs",
		Aliases: ojKinds[:4],
		Short:   "List OptimizationJobs with their trials and best objective",
		Long: `List OptimizationJobs: NAME STATE TRIALS RUNNING BEST AGE. TRIALS counts the trials that
ended of those the search runs, RUNNING those not ended yet, BEST is the objective value of the
best trial so far (status.result's). -o wide adds OBJECTIVE, ALGORITHM, BEST-TRIAL and MESSAGE.

STATE is Created, Running, Suspended, Complete or Failed, from the OptimizationJob's conditions.`,
		Example: `  gantry list optimizationjobs
  gantry list oj -A -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return lo.run(cmd.Context()) },
	}
	lo.out = addOutputFlags(cmd, true)
	cmd.Flags().BoolVarP(&lo.allNamespaces, "all-namespaces", "A", false, "List the OptimizationJobs of every namespace.")
	cmd.Flags().StringVarP(&lo.selector, "selector", "l", "", "Label selector, as in kubectl (e.g. team=a,app!=b).")
	return cmd
}

func (lo *listOptimizationsOptions) run(ctx context.Context) error {
	ns := ""
	if !lo.allNamespaces {
		var err error
		if ns, err = lo.Namespace(); err != nil {
			return err
		}
	}
	opts := []client.ListOption{client.InNamespace(ns)}
	if lo.selector != "" {
		sel, err := parseLabelSelector(lo.selector)
		if err != nil {
			return err
		}
		opts = append(opts, client.MatchingLabelsSelector{Selector: sel})
	}
	r, err := lo.Reader()
	if err != nil {
		return err
	}
	views, err := lo.views(ctx, r, ns, opts)
	if err != nil {
		return err
	}
	if !lo.out.table() {
		return lo.out.printDocument(lo.Streams.Out, optimizationListDocument(views), optimizationNames(views))
	}
	tw := tableWriter(lo.Streams.Out)
	if !lo.out.noHeaders {
		lo.header(tw)
	}
	for _, v := range views {
		lo.row(tw, v)
	}
	if len(views) == 0 {
		if ns == "" {
			_, _ = fmt.Fprintln(lo.Streams.ErrOut, "No OptimizationJobs found.")
		} else {
			_, _ = fmt.Fprintf(lo.Streams.ErrOut, "No OptimizationJobs found in namespace %s.\n", ns)
		}
	}
	return tw.Flush()
}

// views lists the OptimizationJobs and, in one more request, their trials.
func (lo *listOptimizationsOptions) views(ctx context.Context, r *jobview.Reader, ns string, opts []client.ListOption) ([]*OptimizationView, error) {
	list := &trainer.OptimizationJobList{}
	if err := r.Client.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	if len(list.Items) == 0 {
		return nil, nil
	}
	byJob, err := trialsByJob(ctx, r, ns)
	if err != nil {
		return nil, err
	}
	views := make([]*OptimizationView, len(list.Items))
	for i := range list.Items {
		oj := &list.Items[i]
		views[i] = newOptimizationView(oj, optimization.Trials(oj, byJob[oj.Namespace+"/"+oj.Name]), false)
	}
	return views, nil
}

func (lo *listOptimizationsOptions) header(w io.Writer) {
	cols := []string{"NAME", lo.stateHeader(), "TRIALS", "RUNNING", "BEST", "AGE"}
	if lo.allNamespaces {
		cols = append([]string{"NAMESPACE"}, cols...)
	}
	if lo.out.wide() {
		cols = append(cols, "OBJECTIVE", "ALGORITHM", "BEST-TRIAL", "MESSAGE")
	}
	row(w, cols...)
}

func (lo *listOptimizationsOptions) row(w io.Writer, v *OptimizationView) {
	cols := []string{v.Name, lo.stateText(v.State), trialsText(v.Trials), strconv.Itoa(v.Trials.Running),
		bestText(v), age(lo.Now(), v.Created.Time)}
	if lo.allNamespaces {
		cols = append([]string{v.Namespace}, cols...)
	}
	if lo.out.wide() {
		bestTrial := "-"
		if v.Best != nil {
			bestTrial = v.Best.Name
		}
		cols = append(cols, v.Metric+" ("+v.Direction+")", v.Algorithm, bestTrial, orDash(v.Message))
	}
	row(w, cols...)
}

// optimizationListDocument is `list optimizationjobs -o json|yaml`: the views in a versioned list.
func optimizationListDocument(views []*OptimizationView) map[string]any {
	items := make([]any, len(views))
	for i := range views {
		items[i] = views[i]
	}
	return map[string]any{"apiVersion": jobview.APIVersion, "kind": "OptimizationJobViewList", "items": items}
}

func optimizationNames(views []*OptimizationView) []string {
	names := make([]string, len(views))
	for i, v := range views {
		names[i] = ojResource + v.Name
	}
	return names
}
