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

package main

import (
	"context"
	_ "embed"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// demoOptimization is the demo's OptimizationJob: its trials' simulated loss is known, so is the
// result.
//
//go:embed demo-optimization.yaml
var demoOptimization []byte

// submitOptimization creates the demo's OptimizationJob and returns its name.
func submitOptimization(ctx context.Context, cl client.Client) (string, error) {
	oj := &trainer.OptimizationJob{}
	if err := utilyaml.UnmarshalStrict(demoOptimization, oj); err != nil {
		return "", fmt.Errorf("demo-optimization.yaml: %w", err)
	}
	oj.Namespace = demoNamespace
	if err := cl.Create(ctx, oj); err != nil {
		return "", fmt.Errorf("creating OptimizationJob %s: %w", oj.Name, err)
	}
	return oj.Name, nil
}

// optRecord is what the watcher shows of the OptimizationJob.
type optRecord struct {
	name, state string
}

// optState is one line of an OptimizationJob: its Complete or Failed condition, else the
// Running condition's count of trials, with the best trial so far.
func optState(oj *trainer.OptimizationJob) string {
	var state string
	for _, t := range []string{optimization.ConditionComplete, optimization.ConditionFailed} {
		if c := meta.FindStatusCondition(oj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			state = c.Type + ": " + c.Message
		}
	}
	if state == "" {
		state = "Created"
		if c := meta.FindStatusCondition(oj.Status.Conditions, optimization.ConditionRunning); c != nil {
			state = "Running: " + c.Message
		}
	}
	if r := oj.Status.Result; r != nil {
		var params []string
		for _, p := range r.Parameters {
			params = append(params, p.Name+"="+p.Value)
		}
		if strings.HasPrefix(state, optimization.ConditionComplete) {
			// The message names the best trial already.
			state += " (" + strings.Join(params, ", ") + ")"
		} else {
			state += fmt.Sprintf(" (best %s, %s)", r.TrainJobName, strings.Join(params, ", "))
		}
	}
	return state
}

func (r *optRecord) ended() bool {
	return r == nil || strings.HasPrefix(r.state, optimization.ConditionComplete) || strings.HasPrefix(r.state, optimization.ConditionFailed)
}

func (w *watcher) handleOptimization(oj *trainer.OptimizationJob, deleted bool) {
	if w.opt == nil || oj.Name != w.opt.name {
		return
	}
	state := optState(oj)
	if deleted {
		state = "deleted"
	}
	if state != w.opt.state {
		w.opt.state = state
		w.printf("optimizationjob %-14s %s", oj.Name, state)
	}
}

// progressLine is what a TrainJob's reported progress adds to the log: a line when it first
// reports, passes half way, and reaches 100%; "" otherwise. step is the last of those shown.
func progressLine(tj *trainer.TrainJob, step *int) string {
	ts := tj.Status.TrainerStatus
	if ts == nil || ts.ProgressPercentage == nil {
		return ""
	}
	p := int(*ts.ProgressPercentage)
	next := 0
	switch {
	case p >= 100:
		next = 3
	case p >= 50:
		next = 2
	default:
		next = 1
	}
	if next <= *step {
		return ""
	}
	*step = next
	parts := []string{fmt.Sprintf("progress %d%%", p)}
	if ts.EstimatedRemainingSeconds != nil {
		parts = append(parts, fmt.Sprintf("ETA %ds", *ts.EstimatedRemainingSeconds))
	}
	for _, m := range ts.Metrics {
		parts = append(parts, m.Name+" "+m.Value)
	}
	return strings.Join(parts, ", ")
}

// lastReport is the summary's view of a TrainJob's last report: its progress and metrics.
func lastReport(tj *trainer.TrainJob) (progress, metrics string) {
	ts := tj.Status.TrainerStatus
	if ts == nil {
		return "-", "-"
	}
	progress = "-"
	if ts.ProgressPercentage != nil {
		progress = fmt.Sprintf("%d%%", *ts.ProgressPercentage)
	}
	var ms []string
	for _, m := range ts.Metrics {
		ms = append(ms, m.Name+"="+m.Value)
	}
	if len(ms) == 0 {
		return progress, "-"
	}
	return progress, strings.Join(ms, " ")
}
