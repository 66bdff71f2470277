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

	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// getOptimization is `gantry get optimizationjob/NAME`.
func (g *getOptions) getOptimization(ctx context.Context, name string) error {
	ns, err := g.Namespace()
	if err != nil {
		return err
	}
	r, err := g.Reader()
	if err != nil {
		return err
	}
	oj := &trainer.OptimizationJob{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oj); err != nil {
		return notFoundOptimization(err, ns, name)
	}
	trials, err := listTrials(ctx, r, oj)
	if err != nil {
		return err
	}
	v := newOptimizationView(oj, trials, true)
	if !g.out.table() {
		return g.out.printDocument(g.Streams.Out, v, []string{ojResource + v.Name})
	}
	g.describeOptimization(g.Streams.Out, v)
	return nil
}

func (g *getOptions) describeOptimization(out io.Writer, v *OptimizationView) {
	now := g.Now()
	oj := v.raw
	w := tableWriter(out)
	field := func(k, v string) { row(w, k+":", v) }
	field("Name", v.Name)
	field("Namespace", v.Namespace)
	field("State", g.stateText(v.State))
	if v.Message != "" {
		field("Message", v.Message)
	}
	field("Objective", v.Metric+" ("+v.Direction+")")
	field("Algorithm", v.Algorithm)
	field("Trials", fmt.Sprintf("%s done (%d failed), %d running; numTrials %d, parallelTrials %d",
		trialsText(v.Trials), v.Trials.Failed, v.Trials.Running, v.NumTrials, v.ParallelTrials))
	field("Created", timeText(now, v.Created.Time))
	if b := bestOf(v.trials); b != nil {
		field("Best so far", b.TrainJob.Name+" ("+v.Metric+" "+objectiveText(b)+")")
		for _, p := range b.Parameters {
			row(w, "  "+p.Name, p.Value)
		}
	} else {
		field("Best so far", "-")
	}
	_ = w.Flush()

	section(out, "Parameters")
	w = tableWriter(out)
	row(w, "  NAME", "SEARCH SPACE")
	for _, p := range oj.Spec.Parameters {
		row(w, "  "+p.Name, searchSpaceText(p.SearchSpace))
	}
	_ = w.Flush()

	g.printTrials(out, v)

	section(out, "Conditions")
	w = tableWriter(out)
	if len(oj.Status.Conditions) == 0 {
		row(w, "  <none>")
	} else {
		row(w, "  TYPE", "STATUS", "REASON", "AGE", "MESSAGE")
		for _, c := range oj.Status.Conditions {
			row(w, "  "+c.Type, string(c.Status), c.Reason, age(now, c.LastTransitionTime.Time), c.Message)
		}
	}
	_ = w.Flush()
}

// printTrials is the trials table: a column per parameter, in spec order, then the objective;
// the best trial is marked with "*".
func (g *getOptions) printTrials(out io.Writer, v *OptimizationView) {
	section(out, "Trials")
	w := tableWriter(out)
	defer func() { _ = w.Flush() }()
	if len(v.trials) == 0 {
		row(w, "  <none>")
		return
	}
	params := v.raw.Spec.Parameters
	cols := []string{"  TRIAL", "STATE"}
	for _, p := range params {
		cols = append(cols, strings.ToUpper(p.Name))
	}
	row(w, append(cols, strings.ToUpper(v.Metric))...)
	for _, t := range v.trials {
		name := "  " + t.TrainJob.Name
		if t.Best {
			name = "* " + t.TrainJob.Name
		}
		tv := trialView(t)
		cols := []string{name, g.stateText(tv.State)}
		for _, p := range params {
			cols = append(cols, orDash(tv.Parameters[p.Name]))
		}
		row(w, append(cols, objectiveText(&t))...)
	}
}

// searchSpaceText writes a search space as the spec says it.
func searchSpaceText(s *trainer.SearchSpace) string {
	typ := func(t trainer.ParameterType) string {
		if t == "" {
			return string(trainer.ParameterTypeFloat)
		}
		return string(t)
	}
	switch {
	case s == nil:
		return "-"
	case s.Uniform != nil:
		return "uniform [" + s.Uniform.Min + ", " + s.Uniform.Max + "] " + typ(s.Uniform.Type)
	case s.LogUniform != nil:
		return "logUniform [" + s.LogUniform.Min + ", " + s.LogUniform.Max + "] " + typ(s.LogUniform.Type)
	case s.Categorical != nil:
		return "categorical " + strings.Join(s.Categorical.Choices, ", ") + " (" + strconv.Itoa(len(s.Categorical.Choices)) + ")"
	}
	return "-"
}
