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
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/optimization"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// trialWith is trial index of job "search" in the given state; loss "" reports no metric.
func trialWith(index int, state, loss string) *trainer.TrainJob {
	w := utiltesting.MakeTrainJobWrapper("ns", optimization.TrialName("search", index)).
		Annotation(optimization.ParametersAnnotation, `[{"name":"opt","value":"v`+string(rune('0'+index))+`"}]`)
	if state != "" {
		w.Condition(metav1.Condition{Type: state, Status: metav1.ConditionTrue, Reason: state})
	}
	if loss != "" {
		w.TrainerStatus(&trainer.TrainJobTrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: loss}}})
	}
	return w.Obj()
}

func TestPlanOptimization(t *testing.T) {
	complete, failedState := trainer.TrainJobComplete, trainer.TrainJobFailed
	cases := map[string]struct {
		num, parallel int32
		trials        map[int]*trainer.TrainJob
		knobs         knobs.Optimization
		ended         *metav1.Condition
		want          optPlan
	}{
		"first trials, up to parallelTrials": {num: 5, parallel: 2, want: optPlan{create: []int{0, 1}}},
		"one slot free": {num: 5, parallel: 2, trials: map[int]*trainer.TrainJob{0: trialWith(0, complete, "1"), 1: trialWith(1, "", "")},
			want: optPlan{create: []int{2}}},
		"no slot free":                   {num: 5, parallel: 2, trials: map[int]*trainer.TrainJob{0: trialWith(0, "", ""), 1: trialWith(1, "", "")}},
		"numTrials reached, one running": {num: 2, parallel: 2, trials: map[int]*trainer.TrainJob{0: trialWith(0, complete, "1"), 1: trialWith(1, "", "")}},
		"suspended": {num: 5, parallel: 2, knobs: knobs.Optimization{MaxFailedTrials: 3, Suspend: true},
			trials: map[int]*trainer.TrainJob{0: trialWith(0, "", "")}, want: optPlan{suspend: true}},
		"too many failed": {num: 5, parallel: 2, knobs: knobs.Optimization{MaxFailedTrials: 1},
			trials: map[int]*trainer.TrainJob{0: trialWith(0, failedState, ""), 1: trialWith(1, failedState, ""), 2: trialWith(2, "", "")},
			want: optPlan{suspend: true, terminal: failed(optimization.ReasonTooManyFailedTrials,
				"2 trials failed, more than the 1 allowed (optimization.gantry.dev/max-failed-trials)")}},
		"all finished": {num: 2, parallel: 1, trials: map[int]*trainer.TrainJob{0: trialWith(0, complete, "0.5"), 1: trialWith(1, failedState, "")},
			want: optPlan{terminal: &metav1.Condition{Type: optimization.ConditionComplete, Status: metav1.ConditionTrue,
				Reason: optimization.ReasonBestTrialFound, Message: "all 2 trials finished (1 failed); best trial search-0"}}},
		"all finished, no objective": {num: 1, parallel: 1, trials: map[int]*trainer.TrainJob{0: trialWith(0, complete, "")},
			want: optPlan{terminal: failed(optimization.ReasonNoObjectiveReported, `all 1 trials finished; none that completed reported metric "loss"`)}},
		"ended stays ended": {num: 5, parallel: 2, ended: failed(optimization.ReasonTooManyFailedTrials, "x"),
			want: optPlan{suspend: true, terminal: failed(optimization.ReasonTooManyFailedTrials, "x")}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oj := utiltesting.MakeOptimizationJobWrapper("ns", "search").Trials(tc.num, tc.parallel).Categorical("opt", "a").Obj()
			if tc.ended != nil {
				oj.Status.Conditions = []metav1.Condition{*tc.ended}
			}
			if tc.knobs == (knobs.Optimization{}) {
				tc.knobs.MaxFailedTrials = knobs.DefaultMaxFailedTrials
			}
			trials := tc.trials
			if trials == nil {
				trials = map[int]*trainer.TrainJob{}
			}
			s := &optScope{oj: oj, trials: trials, total: int(tc.num), knobs: tc.knobs}
			best, err := bestTrial(s)
			if err != nil {
				t.Fatal(err)
			}
			got := planOptimization(s, best)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(optPlan{}), cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("plan (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBestTrial(t *testing.T) {
	complete := trainer.TrainJobComplete
	trials := map[int]*trainer.TrainJob{
		0: trialWith(0, complete, "0.5"),
		1: trialWith(1, complete, "0.2"),
		2: trialWith(2, complete, "0.9"),
		3: trialWith(3, trainer.TrainJobFailed, "0.1"), // failed: not a candidate
		4: trialWith(4, "", "0.05"),                    // running: not yet
		5: trialWith(5, complete, "0.2"),               // ties trial 1: the earlier stays
	}
	cases := map[string]struct {
		direction trainer.ObjectiveDirection
		want      *trainer.OptimizationResult
	}{
		"minimize": {direction: trainer.ObjectiveDirectionMinimize,
			want: &trainer.OptimizationResult{TrainJobName: "search-1", Parameters: []trainer.ParameterAssignment{{Name: "opt", Value: "v1"}}}},
		"maximize": {direction: trainer.ObjectiveDirectionMaximize,
			want: &trainer.OptimizationResult{TrainJobName: "search-2", Parameters: []trainer.ParameterAssignment{{Name: "opt", Value: "v2"}}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oj := utiltesting.MakeOptimizationJobWrapper("ns", "search").Objective("loss", tc.direction).Obj()
			got, err := bestTrial(&optScope{oj: oj, trials: trials})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("best (-want,+got):\n%s", diff)
			}
		})
	}
}
