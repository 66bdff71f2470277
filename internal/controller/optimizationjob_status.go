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

package controller

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// optScope is one OptimizationJob reconcile's view: the job as read and its trials by index.
type optScope struct {
	oj     *trainer.OptimizationJob
	trials map[int]*trainer.TrainJob
	total  int
	knobs  knobs.Optimization
	events []queuedEvent
	// broken is a terminal failure found while building trials (reason, message).
	broken *metav1.Condition
}

func (s *optScope) event(eventType, reason, message string) {
	s.events = append(s.events, queuedEvent{eventType: eventType, reason: reason, message: message})
}

// trialCounts are the trials by outcome.
type trialCounts struct {
	created, complete, failed, unfinished int
}

func (s *optScope) counts() trialCounts {
	var c trialCounts
	for _, tj := range s.trials {
		c.created++
		switch outcome, _ := trainjob.Outcome(&tj.Status); outcome {
		case trainjob.StateComplete:
			c.complete++
		case trainjob.StateFailed:
			c.failed++
		default:
			c.unfinished++
		}
	}
	return c
}

// optPlan is what a reconcile does, decided from the scope alone.
type optPlan struct {
	// terminal is the Complete or Failed condition to hold, nil while the search goes on.
	terminal *metav1.Condition
	// suspend: unfinished trials are to be suspended (suspend knob, or the job failed).
	suspend bool
	// create are the trial indices to create now.
	create []int
}

// planOptimization decides the reconcile. A job that ended stays ended: its conditions are
// kept, and nothing new runs. Otherwise it fails once more trials failed than max-failed-trials
// allows, completes when every trial finished, and else keeps at most parallelTrials trials
// unfinished, creating the lowest indices not yet created.
func planOptimization(s *optScope, best *trainer.OptimizationResult) optPlan {
	c := s.counts()
	if prev := endedCondition(s.oj); prev != nil {
		return optPlan{terminal: prev, suspend: prev.Type == optimization.ConditionFailed}
	}
	if s.broken != nil {
		return optPlan{terminal: s.broken, suspend: true}
	}
	if c.failed > int(s.knobs.MaxFailedTrials) {
		return optPlan{suspend: true, terminal: failed(optimization.ReasonTooManyFailedTrials,
			fmt.Sprintf("%d trials failed, more than the %d allowed (%s)", c.failed, s.knobs.MaxFailedTrials, knobs.OptimizationMaxFailedTrials))}
	}
	if c.created >= s.total && c.unfinished == 0 {
		if best == nil {
			return optPlan{terminal: failed(optimization.ReasonNoObjectiveReported,
				fmt.Sprintf("all %d trials finished; none that completed reported metric %q", s.total, objectiveMetric(s.oj)))}
		}
		return optPlan{terminal: &metav1.Condition{Type: optimization.ConditionComplete, Status: metav1.ConditionTrue,
			Reason: optimization.ReasonBestTrialFound, Message: fmt.Sprintf("all %d trials finished (%d failed); best trial %s",
				s.total, c.failed, best.TrainJobName)}}
	}
	if s.knobs.Suspend {
		return optPlan{suspend: true}
	}
	var create []int
	for i := 0; i < s.total && c.unfinished+len(create) < int(s.oj.Spec.ParallelTrials); i++ {
		if _, ok := s.trials[i]; !ok {
			create = append(create, i)
		}
	}
	return optPlan{create: create}
}

func failed(reason, message string) *metav1.Condition {
	return &metav1.Condition{Type: optimization.ConditionFailed, Status: metav1.ConditionTrue, Reason: reason, Message: message}
}

// endedCondition is the job's Complete or Failed condition when one holds.
func endedCondition(oj *trainer.OptimizationJob) *metav1.Condition {
	for _, t := range []string{optimization.ConditionFailed, optimization.ConditionComplete} {
		if c := meta.FindStatusCondition(oj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c.DeepCopy()
		}
	}
	return nil
}

func objectiveMetric(oj *trainer.OptimizationJob) string {
	if len(oj.Spec.Objectives) == 0 {
		return ""
	}
	return oj.Spec.Objectives[0].Metric
}

// bestTrial is the completed trial with the best objective value, the lowest index on a tie;
// nil when no completed trial reported the objective.
func bestTrial(s *optScope) (*trainer.OptimizationResult, error) {
	if len(s.oj.Spec.Objectives) == 0 {
		return nil, nil
	}
	obj := s.oj.Spec.Objectives[0]
	bestIndex, bestValue := -1, 0.0
	for _, i := range slices.Sorted(maps.Keys(s.trials)) {
		tj := s.trials[i]
		if outcome, _ := trainjob.Outcome(&tj.Status); outcome != trainjob.StateComplete {
			continue
		}
		v, ok := optimization.Objective(tj, obj.Metric)
		if ok && (bestIndex < 0 || optimization.Better(obj.Direction, v, bestValue)) {
			bestIndex, bestValue = i, v
		}
	}
	if bestIndex < 0 {
		return nil, nil
	}
	tj := s.trials[bestIndex]
	params, err := optimization.DecodeParameters(tj.Annotations[optimization.ParametersAnnotation])
	if err != nil {
		return nil, err
	}
	return &trainer.OptimizationResult{TrainJobName: tj.Name, Parameters: params}, nil
}

// desiredOptStatus is the status the plan leads to: Created always, Running while the search
// goes on (False when suspended or ended), the terminal condition when there is one, and the
// best trial so far.
func desiredOptStatus(s *optScope, p optPlan, best *trainer.OptimizationResult) *trainer.OptimizationJobStatus {
	st := s.oj.Status.DeepCopy()
	gen := s.oj.Generation
	set := func(c metav1.Condition) {
		c.ObservedGeneration = gen
		meta.SetStatusCondition(&st.Conditions, c)
	}
	set(metav1.Condition{Type: optimization.ConditionCreated, Status: metav1.ConditionTrue,
		Reason: optimization.ReasonCreated, Message: "OptimizationJob is created"})
	c := s.counts()
	progress := fmt.Sprintf("%d of %d trials finished (%d failed), %d running", c.complete+c.failed, s.total, c.failed, c.unfinished)
	switch {
	case p.terminal != nil:
		set(metav1.Condition{Type: optimization.ConditionRunning, Status: metav1.ConditionFalse, Reason: p.terminal.Reason, Message: progress})
		set(*p.terminal)
	case p.suspend:
		set(metav1.Condition{Type: optimization.ConditionRunning, Status: metav1.ConditionFalse,
			Reason: optimization.ReasonSuspended, Message: progress + "; suspended by " + knobs.OptimizationSuspend})
	default:
		set(metav1.Condition{Type: optimization.ConditionRunning, Status: metav1.ConditionTrue,
			Reason: optimization.ReasonTrialsRunning, Message: progress})
	}
	if best != nil {
		st.Result = best
	}
	return st
}

// formatParameters writes trial values for messages: "lr=0.01, opt=adam".
func formatParameters(values []trainer.ParameterAssignment) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v.Name + "=" + v.Value
	}
	return strings.Join(parts, ", ")
}

// trialIndex reads a trial's index label; ok is false for a TrainJob that is not a trial.
func trialIndex(tj *trainer.TrainJob) (int, bool) {
	i, err := strconv.Atoi(tj.Labels[optimization.TrialIndexLabel])
	return i, err == nil && i >= 0 && i < optimization.MaxTrials
}
