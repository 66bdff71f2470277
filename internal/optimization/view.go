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

package optimization

import (
	"slices"
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// What the tools that show an OptimizationJob (the CLI and the web UI) read of it and of its
// trials, so that they say the same thing; the controller decides, these only read.

// Trial is one trial of an OptimizationJob as it is shown.
type Trial struct {
	Index    int
	TrainJob *trainer.TrainJob
	// Parameters are the values the trial ran with (its ParametersAnnotation); nil when the
	// annotation is missing or unreadable.
	Parameters []trainer.ParameterAssignment
	// Objective is the objective metric's value the trial reported; nil when it reported none.
	Objective *float64
	// Best: the trial is status.result's, the controller's best so far.
	Best bool
}

// Trials picks an OptimizationJob's trials out of TrainJobs (e.g. those listed by JobNameLabel),
// ordered by index. As in the controller, a TrainJob counts only when the job controls it and
// it carries a valid TrialIndexLabel: a TrainJob merely labelled so is not a trial.
func Trials(oj *trainer.OptimizationJob, tjs []trainer.TrainJob) []Trial {
	metric := ObjectiveMetric(oj)
	best := ""
	if oj.Status.Result != nil {
		best = oj.Status.Result.TrainJobName
	}
	var out []Trial
	for i := range tjs {
		tj := &tjs[i]
		idx, err := strconv.Atoi(tj.Labels[TrialIndexLabel])
		if err != nil || idx < 0 || idx >= MaxTrials || !metav1.IsControlledBy(tj, oj) {
			continue
		}
		t := Trial{Index: idx, TrainJob: tj, Best: tj.Name == best}
		if raw, ok := tj.Annotations[ParametersAnnotation]; ok {
			t.Parameters, _ = DecodeParameters(raw) // unreadable values show as none
		}
		if v, ok := Objective(tj, metric); ok {
			t.Objective = &v
		}
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Trial) int { return a.Index - b.Index })
	return out
}

// ObjectiveMetric is the metric the job optimises; "" when the spec names none.
func ObjectiveMetric(oj *trainer.OptimizationJob) string {
	if len(oj.Spec.Objectives) == 0 {
		return ""
	}
	return oj.Spec.Objectives[0].Metric
}

// Direction is the objective's direction, Minimize (the schema's default) when unset.
func Direction(oj *trainer.OptimizationJob) trainer.ObjectiveDirection {
	if len(oj.Spec.Objectives) == 0 || oj.Spec.Objectives[0].Direction == "" {
		return trainer.ObjectiveDirectionMinimize
	}
	return oj.Spec.Objectives[0].Direction
}

// Algorithm names the search algorithm, with random search's seed when the spec sets one.
func Algorithm(spec *trainer.OptimizationJobSpec) string {
	if IsGrid(spec) {
		return "grid"
	}
	if a := spec.SearchAlgorithm; a != nil && a.Random != nil && a.Random.Seed != nil {
		return "random (seed " + strconv.FormatInt(*a.Random.Seed, 10) + ")"
	}
	return "random"
}

// Counts are an OptimizationJob's trials by outcome, and how many it runs in all.
type Counts struct {
	Total, Created, Complete, Failed, Unfinished int
}

// Done is how many trials ended, either way.
func (c Counts) Done() int { return c.Complete + c.Failed }

// Count counts the trials by their outcome (internal/trainjob's), as the controller does.
func Count(oj *trainer.OptimizationJob, trials []Trial) Counts {
	c := Counts{Total: Total(&oj.Spec)}
	for _, t := range trials {
		c.Created++
		switch outcome, _ := trainjob.Outcome(&t.TrainJob.Status); outcome {
		case trainjob.StateComplete:
			c.Complete++
		case trainjob.StateFailed:
			c.Failed++
		default:
			c.Unfinished++
		}
	}
	return c
}

// JobState is the one word for the OptimizationJob, in the TrainJob states' words so the tools
// show and colour both alike: Failed or Complete once ended, Suspended when its Running
// condition says so, Running while trials run, else Created (the controller has not seen it).
func JobState(oj *trainer.OptimizationJob) trainjob.State {
	conds := oj.Status.Conditions
	switch {
	case meta.IsStatusConditionTrue(conds, ConditionFailed):
		return trainjob.StateFailed
	case meta.IsStatusConditionTrue(conds, ConditionComplete):
		return trainjob.StateComplete
	case meta.IsStatusConditionTrue(conds, ConditionRunning):
		return trainjob.StateRunning
	}
	if c := meta.FindStatusCondition(conds, ConditionRunning); c != nil && c.Reason == ReasonSuspended {
		return trainjob.StateSuspended
	}
	return trainjob.StateCreated
}

// JobMessage is the sentence behind JobState: the terminal condition's message, else the
// Running condition's (its progress).
func JobMessage(oj *trainer.OptimizationJob) string {
	for _, t := range []string{ConditionFailed, ConditionComplete} {
		if c := meta.FindStatusCondition(oj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.Message
		}
	}
	if c := meta.FindStatusCondition(oj.Status.Conditions, ConditionRunning); c != nil {
		return c.Message
	}
	return ""
}

// FormatValue writes an objective value as the controller's events do (shortest exact form).
func FormatValue(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
