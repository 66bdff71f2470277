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
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// OptimizationJobs in `list` and `get`: `gantry list optimizationjobs` and
// `gantry get optimizationjob/NAME`, kubectl's words, so the TrainJob forms stay as they are.

// ojKinds are the spellings of the OptimizationJob kind before a "/" in get's argument, and
// the names of list's subcommand.
var ojKinds = []string{"optimizationjob", "optimizationjobs", "oj", "ojs", "optimizationjob.trainer.kubeflow.org"}

// tjKinds are the spellings of the TrainJob kind get accepts, e.g. from `list -o name`.
var tjKinds = []string{"trainjob", "trainjobs", "tj", "trainjob.trainer.kubeflow.org"}

// splitKind reads get's argument: a plain name is a TrainJob's; KIND/NAME names the kind.
func splitKind(arg string) (optimizationJob bool, name string, err error) {
	kind, name, ok := strings.Cut(arg, "/")
	switch {
	case !ok:
		return false, arg, nil
	case name == "":
		return false, "", usageErrorf("%q: give a name after the /", arg)
	case slices.Contains(ojKinds, strings.ToLower(kind)):
		return true, name, nil
	case slices.Contains(tjKinds, strings.ToLower(kind)):
		return false, name, nil
	}
	return false, "", usageErrorf("%q: unknown kind %q: give NAME, trainjob/NAME or optimizationjob/NAME", arg, kind)
}

// notFoundOptimization names the job and namespace in a NotFound error.
func notFoundOptimization(err error, ns, name string) error {
	if apierrors.IsNotFound(err) {
		return withCode(ExitNotFound, fmt.Errorf("OptimizationJob %q not found in namespace %q", name, ns))
	}
	return err
}

// listTrials reads one OptimizationJob's trials: one list request, by JobNameLabel.
func listTrials(ctx context.Context, r *jobview.Reader, oj *trainer.OptimizationJob) ([]optimization.Trial, error) {
	list := &trainer.TrainJobList{}
	if err := r.Client.List(ctx, list, client.InNamespace(oj.Namespace),
		client.MatchingLabels{optimization.JobNameLabel: oj.Name}); err != nil {
		return nil, fmt.Errorf("listing the trials of OptimizationJob %s: %w", oj.Name, err)
	}
	return optimization.Trials(oj, list.Items), nil
}

// trialsByJob reads the trials of every OptimizationJob of a namespace ("" all) in one
// request: every TrainJob with the JobNameLabel, by namespace/job.
func trialsByJob(ctx context.Context, r *jobview.Reader, ns string) (map[string][]trainer.TrainJob, error) {
	list := &trainer.TrainJobList{}
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{optimization.JobNameLabel}); err != nil {
		return nil, fmt.Errorf("listing the trials: %w", err)
	}
	out := map[string][]trainer.TrainJob{}
	for _, tj := range list.Items {
		k := tj.Namespace + "/" + tj.Labels[optimization.JobNameLabel]
		out[k] = append(out[k], tj)
	}
	return out, nil
}

// OptimizationView is `get optimizationjob/NAME -o json|yaml` and an item of `list
// optimizationjobs -o json|yaml`: versioned as the TrainJob views; its fields only grow.
type OptimizationView struct {
	APIVersion     string         `json:"apiVersion,omitempty"`
	Kind           string         `json:"kind,omitempty"`
	Name           string         `json:"name"`
	Namespace      string         `json:"namespace"`
	State          trainjob.State `json:"state"`
	Message        string         `json:"message,omitempty"`
	Metric         string         `json:"metric"`
	Direction      string         `json:"direction"`
	Algorithm      string         `json:"algorithm"`
	NumTrials      int32          `json:"numTrials"`
	ParallelTrials int32          `json:"parallelTrials"`
	Trials         TrialCounts    `json:"trialCounts"`
	Best           *TrialView     `json:"best,omitempty"`
	TrialList      []TrialView    `json:"trials,omitempty"`
	Created        metav1.Time    `json:"created"`
	raw            *trainer.OptimizationJob
	trials         []optimization.Trial
}

// TrialCounts are the trials by outcome; Total is how many the search runs.
type TrialCounts struct {
	Total    int `json:"total"`
	Created  int `json:"created"`
	Complete int `json:"complete"`
	Failed   int `json:"failed"`
	Running  int `json:"running"`
}

// TrialView is one trial: its TrainJob, state (internal/trainjob's), values and objective.
type TrialView struct {
	Name       string            `json:"name"`
	Index      int               `json:"index"`
	State      trainjob.State    `json:"state"`
	Parameters map[string]string `json:"parameters,omitempty"`
	Objective  *float64          `json:"objective,omitempty"`
	Best       bool              `json:"best,omitempty"`
}

// newOptimizationView summarises an OptimizationJob and its trials.
func newOptimizationView(oj *trainer.OptimizationJob, trials []optimization.Trial, withTrials bool) *OptimizationView {
	c := optimization.Count(oj, trials)
	v := &OptimizationView{
		APIVersion: jobview.APIVersion, Kind: "OptimizationJobView",
		Name: oj.Name, Namespace: oj.Namespace,
		State: optimization.JobState(oj), Message: optimization.JobMessage(oj),
		Metric: optimization.ObjectiveMetric(oj), Direction: string(optimization.Direction(oj)),
		Algorithm: optimization.Algorithm(&oj.Spec), NumTrials: oj.Spec.NumTrials, ParallelTrials: oj.Spec.ParallelTrials,
		Trials:  TrialCounts{Total: c.Total, Created: c.Created, Complete: c.Complete, Failed: c.Failed, Running: c.Unfinished},
		Created: oj.CreationTimestamp,
		raw:     oj, trials: trials,
	}
	for _, t := range trials {
		tv := trialView(t)
		if t.Best {
			v.Best = &tv
		}
		if withTrials {
			v.TrialList = append(v.TrialList, tv)
		}
	}
	return v
}

func trialView(t optimization.Trial) TrialView {
	tv := TrialView{Name: t.TrainJob.Name, Index: t.Index, Objective: t.Objective, Best: t.Best,
		State: trainjob.DeriveState(t.TrainJob, nil, nil).State}
	if len(t.Parameters) > 0 {
		tv.Parameters = map[string]string{}
		for _, p := range t.Parameters {
			tv.Parameters[p.Name] = p.Value
		}
	}
	return tv
}

// bestText is the BEST column: the best trial's objective value, "-" before there is one.
func bestText(v *OptimizationView) string {
	if v.Best == nil || v.Best.Objective == nil {
		return "-"
	}
	return optimization.FormatValue(*v.Best.Objective)
}

// trialsText is the TRIALS column: trials that ended of those the search runs.
func trialsText(c TrialCounts) string {
	return strconv.Itoa(c.Complete+c.Failed) + "/" + strconv.Itoa(c.Total)
}

// completeGetNames completes get's argument: the namespace's TrainJobs, and its
// OptimizationJobs as optimizationjob/NAME.
func (o *Options) completeGetNames(cmd *cobra.Command, args []string, prefix string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	names, directive := o.completeJobs(cmd, args, prefix)
	if directive == cobra.ShellCompDirectiveError {
		return nil, directive
	}
	ns, r, err := o.completionReader()
	if err != nil {
		return nil, cobra.ShellCompDirectiveError
	}
	list := &trainer.OptimizationJobList{}
	if err := r.Client.List(cmd.Context(), list, client.InNamespace(ns)); err != nil {
		return names, directive // a cluster without the CRD still completes TrainJobs
	}
	for _, oj := range list.Items {
		if n := "optimizationjob/" + oj.Name; strings.HasPrefix(n, prefix) {
			names = append(names, n)
		}
	}
	return names, cobra.ShellCompDirectiveNoFileComp
}
