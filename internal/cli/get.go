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
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/multicluster"
)

// lastEvents is how many events get shows; `gantry events` shows them all.
const lastEvents = 10

type getOptions struct {
	*Options
	out     *outputFlags
	local   bool
	workdir string
	kueueNS string
}

func newGetCommand(o *Options) *cobra.Command {
	g := &getOptions{Options: o}
	cmd := &cobra.Command{
		Use:     "get NAME | optimizationjob/NAME",
		Aliases: []string{"describe"},
		Short:   "Show one TrainJob: state, steps, progress, conditions and recent events",
		Long: `Show one TrainJob: its state and why, the runtime, size and Kueue queue, the steps (the
newest pod of dataset-initializer, model-initializer, node-<i>, launcher-<i>), the progress and
metrics the training reports, the conditions and the last 10 events.

A TrainJob Kueue's MultiKueue dispatched (spec.managedBy kueue.x-k8s.io/multikueue) runs on a
worker cluster: Worker names it, and the steps and events are read there through the worker's
MultiKueueCluster kubeconfig Secret (in --kueue-namespace) when you may read that Secret;
otherwise Worker says what could not be read. Before it is dispatched, Worker says which Kueue
state holds it.

-o json and -o yaml print a versioned view document (apiVersion gantry.dev/v1, kind
TrainJobView) for scripts and agents; its fields only grow within a version.

optimizationjob/NAME (or oj/NAME) shows an OptimizationJob: its objective, algorithm and trial
counts, the best trial so far with its parameters and objective, the parameters' search spaces,
the trials (state, values, objective; the best marked *) and the conditions. Its -o json is an
OptimizationJobView.`,
		Example: `  gantry get my-job
  gantry get optimizationjob/my-search
  gantry get my-job -o json | jq .state
  gantry get my-job -o jsonpath='{.progress.percent}'`,
		Args:              exactlyOneName,
		ValidArgsFunction: o.completeGetNames,
		RunE:              func(cmd *cobra.Command, args []string) error { return g.run(cmd.Context(), args[0]) },
	}
	g.out = addOutputFlags(cmd, false)
	cmd.Flags().BoolVar(&g.local, "local", false, "Show a local run (gantry run --local) from its run.json instead.")
	cmd.Flags().StringVar(&g.workdir, "workdir", "", "With --local, the run's workdir (default "+LocalRunsDir+"/NAME).")
	addKueueNamespaceFlag(cmd, &g.kueueNS)
	return cmd
}

func (g *getOptions) run(ctx context.Context, arg string) error {
	optimizationJob, name, err := splitKind(arg)
	switch {
	case err != nil:
		return err
	case optimizationJob:
		return g.getOptimization(ctx, name)
	}
	if g.local {
		return g.getLocal(name)
	}
	ns, err := g.Namespace()
	if err != nil {
		return err
	}
	r, err := g.Reader()
	if err != nil {
		return err
	}
	r.KueueNamespace = g.kueueNS
	v, err := r.Get(ctx, ns, name)
	if err != nil {
		return notFoundJob(err, ns, name)
	}
	if !g.out.table() {
		return g.out.printDocument(g.Streams.Out, v, []string{"trainjob.trainer.kubeflow.org/" + v.Name})
	}
	g.describe(g.Streams.Out, v)
	return nil
}

func (g *getOptions) describe(out io.Writer, v *jobview.View) {
	now := g.Now()
	w := tableWriter(out)
	field := func(k, v string) { row(w, k+":", v) }
	field("Name", v.Name)
	field("Namespace", v.Namespace)
	field("State", g.stateText(v.State))
	if v.Message != "" {
		field("Message", v.Message)
	}
	field("Runtime", runtimeText(v))
	field("Nodes", nodesText(&v.Summary))
	if v.Queue != "" {
		field("Queue", queueText(&v.Summary))
	}
	if p := v.MultiKueue; p != nil {
		field("Worker", workerText(p))
	}
	field("Created", timeText(now, v.Created.Time))
	if v.Finished != nil {
		field("Finished", timeText(now, v.Finished.Time))
	}
	if p := v.Progress; p != nil {
		field("Progress", progressText(now, p, v.State.Terminal()))
		for _, m := range p.Metrics {
			row(w, "  "+m.Name, m.Value)
		}
	}
	_ = w.Flush()

	steps := "Steps"
	if p := v.MultiKueue; p.Dispatched() {
		steps += " (on worker " + p.Worker + ")"
	}
	section(out, steps)
	w = tableWriter(out)
	switch {
	case v.MultiKueue.Dispatched() && v.MultiKueue.PodsHidden != "":
		row(w, "  <not shown>")
	case len(v.Steps) == 0:
		row(w, "  <none>")
	default:
		row(w, "  STEP", "POD", "PHASE", "RESTARTS", "NODE", "DEVICES", "STARTED")
		for _, s := range v.Steps {
			started := "-"
			if s.Started != nil {
				started = age(now, s.Started.Time) + " ago"
			}
			row(w, "  "+s.Name, s.Pod, string(s.Phase), strconv.Itoa(int(s.Restarts)), orDash(s.Node),
				strconv.FormatInt(s.Devices, 10), started)
		}
	}
	_ = w.Flush()

	section(out, "Conditions")
	w = tableWriter(out)
	if len(v.Conditions) == 0 {
		row(w, "  <none>")
	} else {
		row(w, "  TYPE", "STATUS", "REASON", "AGE", "MESSAGE")
		for _, c := range v.Conditions {
			row(w, "  "+c.Type, string(c.Status), c.Reason, age(now, c.LastTransitionTime.Time), c.Message)
		}
	}
	_ = w.Flush()

	events := v.Events
	title := "Events"
	if len(events) > lastEvents {
		events = events[len(events)-lastEvents:]
		title = fmt.Sprintf("Events (last %d of %d; gantry events %s shows all)", lastEvents, len(v.Events), v.Name)
	}
	section(out, title)
	printEvents(out, now, events, "  ", true)
}

// workerText is the Worker line of a MultiKueue job: the worker, why its pods are not shown, or
// the Kueue state before it is dispatched.
func workerText(p *multicluster.Placement) string {
	switch {
	case !p.Dispatched():
		return "none yet (" + p.Waiting + ")"
	case p.PodsHidden != "":
		return p.Worker + " (its pods are not shown: " + p.PodsHidden + ")"
	default:
		return p.Worker + " (" + multicluster.ReasonMultiKueue + ")"
	}
}

// addKueueNamespaceFlag is --kueue-namespace, where MultiKueue's kubeconfig Secrets are.
func addKueueNamespaceFlag(cmd *cobra.Command, into *string) {
	cmd.Flags().StringVar(into, "kueue-namespace", multicluster.DefaultKueueNamespace,
		"Kueue's namespace, which holds the MultiKueue clusters' kubeconfig Secrets (for a job MultiKueue runs on a worker).")
}

func section(out io.Writer, title string) {
	_, _ = fmt.Fprintf(out, "\n%s:\n", title)
}

func runtimeText(v *jobview.View) string {
	s := v.Runtime.Kind + "/" + v.Runtime.Name
	if rt := v.RuntimeSummary; rt != nil && rt.Framework != "" {
		s += " (" + rt.Framework + ")"
	}
	return s
}

func nodesText(s *jobview.Summary) string {
	if s.Nodes == 0 {
		return "-"
	}
	t := strconv.Itoa(int(s.Nodes))
	if s.DevicesPerNode > 0 {
		t += fmt.Sprintf(" × %d %s", s.DevicesPerNode, s.Device)
	}
	return t
}

func queueText(s *jobview.Summary) string {
	t := s.Queue
	if wl := s.Workload; wl != nil {
		var parts []string
		parts = append(parts, "workload "+wl.Name)
		if wl.ClusterQueue != "" {
			parts = append(parts, "cluster queue "+wl.ClusterQueue)
		}
		if wl.Admitted {
			parts = append(parts, "admitted")
		}
		t += " (" + strings.Join(parts, ", ") + ")"
	}
	return t
}

func timeText(now, t time.Time) string {
	return t.UTC().Format(time.RFC3339) + " (" + age(now, t) + " ago)"
}

func progressText(now time.Time, p *jobview.Progress, terminal bool) string {
	var parts []string
	if p.Percent != nil {
		parts = append(parts, fmt.Sprintf("%d%%", *p.Percent))
	}
	if p.ETASeconds != nil && !terminal {
		parts = append(parts, "ETA "+(time.Duration(*p.ETASeconds)*time.Second).String())
	}
	if p.Updated != nil {
		parts = append(parts, "updated "+age(now, p.Updated.Time)+" ago")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ", ")
}

func printEvents(out io.Writer, now time.Time, events []jobview.Event, indent string, header bool) {
	w := tableWriter(out)
	switch {
	case len(events) == 0:
		row(w, indent+"<none>")
	case header:
		row(w, indent+"AGE", "TYPE", "REASON", "OBJECT", "MESSAGE")
	}
	for _, e := range events {
		row(w, indent+age(now, e.Time), e.Type, e.Reason, eventObject(e), e.Message)
	}
	_ = w.Flush()
}

// eventObject is kubectl's kind/name of the object an event is about.
func eventObject(e jobview.Event) string { return strings.ToLower(e.Kind) + "/" + e.Object }
