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
	"io"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// ojResource is the kind.group of OptimizationJobs in "created" lines and -o name.
const ojResource = "optimizationjob.trainer.kubeflow.org/"

type optimizeOptions struct {
	*Options
	out     *outputFlags
	file    string
	name    string
	dryRun  string
	wait    bool
	timeout time.Duration
}

func newOptimizeCommand(o *Options) *cobra.Command {
	op := &optimizeOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "optimize -f FILE",
		Short: "Submit an OptimizationJob (a hyperparameter search over TrainJobs); optionally wait for it",
		Long: `Submit an OptimizationJob from a YAML file (-f). Its trials are TrainJobs named
<name>-<index>; "gantry get optimizationjob/NAME" shows the search, its trials and the best so
far, "gantry list optimizationjobs" lists the searches. Without a name in the file or --name the
job gets a name like the Kubeflow Python SDK's.

--dry-run=server has the API server admit it without creating it.
--wait waits for it to end, then prints the best trial, its parameters and its objective. It
exits with the job's result: 0 Complete, 1 Failed (3 after --timeout).

` + ExitCodesHelp,
		Example: `  gantry optimize -f search.yaml
  gantry optimize -f search.yaml --wait --timeout 2h`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return op.run(cmd.Context(), cmd) },
	}
	op.out = addOutputFlags(cmd, false)
	f := cmd.Flags()
	f.StringVarP(&op.file, "filename", "f", "", `A YAML file with the OptimizationJob ("-" reads standard input).`)
	f.StringVar(&op.name, "name", "", "The OptimizationJob's name (overrides the file's).")
	f.StringVar(&op.dryRun, "dry-run", "none", `"server" has the API server admit the job without creating it.`)
	f.BoolVar(&op.wait, "wait", false, "Wait for the OptimizationJob to end and print its best trial; exit 0 Complete, 1 Failed.")
	f.DurationVar(&op.timeout, "timeout", 0, "With --wait, give up after this long (exit code 3); 0 waits forever.")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	return cmd
}

func (op *optimizeOptions) validate() error {
	switch {
	case op.file == "":
		return usageErrorf("give -f FILE")
	case op.dryRun != "none" && op.dryRun != "server":
		return usageErrorf(`--dry-run must be "none" or "server", got %q`, op.dryRun)
	case op.dryRun != "none" && op.wait:
		return usageErrorf("--wait needs an OptimizationJob that runs: leave out --dry-run")
	}
	return nil
}

func (op *optimizeOptions) run(ctx context.Context, cmd *cobra.Command) error {
	if err := op.validate(); err != nil {
		return err
	}
	ns, err := op.Namespace()
	if err != nil {
		return err
	}
	oj, err := op.job(cmd, ns)
	if err != nil {
		return err
	}
	r, err := op.Reader()
	if err != nil {
		return err
	}
	opts := []client.CreateOption{client.FieldValidation(metav1.FieldValidationStrict)}
	if op.dryRun == "server" {
		opts = append(opts, client.DryRunAll)
	}
	if err := r.Client.Create(ctx, oj, opts...); err != nil {
		return fmt.Errorf("creating OptimizationJob %s: %w", displayName(oj), err)
	}
	if err := op.report(cmd, oj); err != nil || !op.wait {
		return err
	}
	return op.waitAndReport(ctx, r, ns, oj.GetName())
}

// job reads the OptimizationJob of the file, as unstructured data so the API server's strict
// field validation names a misspelt field.
func (op *optimizeOptions) job(cmd *cobra.Command, ns string) (*unstructured.Unstructured, error) {
	docs, err := readDocuments(op.file, op.Streams.In)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	var oj *unstructured.Unstructured
	for _, d := range docs {
		if d.GetKind() != trainer.OptimizationJobKind {
			continue
		}
		if oj != nil {
			return nil, usageErrorf("%s holds more than one OptimizationJob; give one per optimize", op.file)
		}
		oj = d
	}
	switch {
	case oj == nil:
		return nil, usageErrorf("%s holds no OptimizationJob (kind: OptimizationJob, apiVersion: %s)", op.file, trainer.GroupVersion)
	case oj.GetAPIVersion() != trainer.GroupVersion.String():
		return nil, usageErrorf("%s: OptimizationJob has apiVersion %q, want %s", op.file, oj.GetAPIVersion(), trainer.GroupVersion)
	case oj.GetNamespace() != "" && oj.GetNamespace() != ns && cmd.Flags().Changed("namespace"):
		return nil, usageErrorf("the OptimizationJob's namespace %q differs from -n %s", oj.GetNamespace(), ns)
	}
	if oj.GetNamespace() == "" {
		oj.SetNamespace(ns)
	}
	switch {
	case op.name != "":
		oj.SetName(op.name)
		oj.SetGenerateName("")
	case oj.GetName() == "" && oj.GetGenerateName() == "":
		oj.SetName(sdkName())
	}
	return oj, nil
}

// report prints the "created" line and, on standard error so scripts reading the name are not
// disturbed, how to follow the search.
func (op *optimizeOptions) report(cmd *cobra.Command, oj *unstructured.Unstructured) error {
	if !op.out.table() {
		oj.SetManagedFields(nil)
		return op.out.printDocument(op.Streams.Out, oj.Object, []string{ojResource + oj.GetName()})
	}
	if op.dryRun == "server" {
		_, err := fmt.Fprintf(op.Streams.Out, "%s%s created (server dry run)\n", ojResource, oj.GetName())
		return err
	}
	if _, err := fmt.Fprintf(op.Streams.Out, "%s%s created\n", ojResource, oj.GetName()); err != nil {
		return err
	}
	nsFlag := ""
	if cmd.Flags().Changed("namespace") {
		nsFlag = " -n " + oj.GetNamespace()
	}
	_, err := fmt.Fprintf(op.Streams.ErrOut, "Follow it with: gantry get optimizationjob/%s%s\nIts trials: gantry list%s -l %s=%s\n",
		oj.GetName(), nsFlag, nsFlag, optimization.JobNameLabel, oj.GetName())
	return err
}

// waitAndReport waits for the job to end and prints its best trial; a failed job exits 1
// after printing the best trial it found before failing, if any.
func (op *optimizeOptions) waitAndReport(ctx context.Context, r *jobview.Reader, ns, name string) error {
	oj, err := op.waitOptimization(ctx, r, ns, name)
	if err != nil {
		return err
	}
	state := optimization.JobState(oj)
	_, _ = fmt.Fprintf(op.Streams.Out, "%s%s is %s: %s\n", ojResource, name, state, optimization.JobMessage(oj))
	trials, err := listTrials(ctx, r, oj)
	if err != nil {
		return err
	}
	printBest(op.Streams.Out, oj, trials)
	if state == trainjob.StateFailed {
		return withCode(ExitJobFailed, fmt.Errorf("OptimizationJob %s failed: %s", name, optimization.JobMessage(oj)))
	}
	return nil
}

// printBest writes the best trial, its parameters and its objective.
func printBest(out io.Writer, oj *trainer.OptimizationJob, trials []optimization.Trial) {
	best := bestOf(trials)
	if best == nil {
		_, _ = fmt.Fprintln(out, "No best trial: no completed trial reported", optimization.ObjectiveMetric(oj))
		return
	}
	w := tableWriter(out)
	row(w, "Best trial:", best.TrainJob.Name)
	for _, p := range best.Parameters {
		row(w, "  "+p.Name, p.Value)
	}
	row(w, "Objective:", optimization.ObjectiveMetric(oj)+" "+objectiveText(best)+" ("+string(optimization.Direction(oj))+")")
	_ = w.Flush()
}

// bestOf is status.result's trial among the trials; nil before the controller named one.
func bestOf(trials []optimization.Trial) *optimization.Trial {
	for i := range trials {
		if trials[i].Best {
			return &trials[i]
		}
	}
	return nil
}

func objectiveText(t *optimization.Trial) string {
	if t == nil || t.Objective == nil {
		return "-"
	}
	return optimization.FormatValue(*t.Objective)
}

// waitOptimization watches the OptimizationJob until it is Complete or Failed. A zero timeout
// waits forever.
func (op *optimizeOptions) waitOptimization(ctx context.Context, r *jobview.Reader, ns, name string) (*trainer.OptimizationJob, error) {
	if op.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, op.timeout)
		defer cancel()
	}
	var last *trainer.OptimizationJob
	for {
		oj := &trainer.OptimizationJob{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oj)
		if err == nil {
			last = oj
			if optimization.JobState(oj).Terminal() {
				return oj, nil
			}
			var done *trainer.OptimizationJob
			done, err = watchOptimization(ctx, r, oj)
			if done != nil {
				return done, nil
			}
			if errors.Is(err, errWatchClosed) {
				continue // read it again and watch on
			}
		}
		return nil, op.optimizationWaitError(ctx, err, ns, name, last)
	}
}

func watchOptimization(ctx context.Context, r *jobview.Reader, oj *trainer.OptimizationJob) (*trainer.OptimizationJob, error) {
	var done *trainer.OptimizationJob
	_, err := watchOne(ctx, r.Client, &trainer.OptimizationJobList{}, oj, func(cur *trainer.OptimizationJob) (bool, error) {
		if optimization.JobState(cur).Terminal() {
			done = cur
		}
		return done != nil, nil
	})
	return done, err
}

func (op *optimizeOptions) optimizationWaitError(ctx context.Context, err error, ns, name string, last *trainer.OptimizationJob) error {
	switch {
	case errors.Is(err, errGone):
		return withCode(ExitNotFound, fmt.Errorf("OptimizationJob %s was deleted while waiting for it to end", name))
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg := fmt.Sprintf("timed out after %s waiting for OptimizationJob %s to end", op.timeout, name)
		if last != nil {
			msg += fmt.Sprintf(" (it is %s: %s)", optimization.JobState(last), optimization.JobMessage(last))
		}
		return withCode(ExitTimeout, errors.New(msg))
	default:
		return notFoundOptimization(err, ns, name)
	}
}
