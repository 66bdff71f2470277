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

package browser

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// optimizationExpectation is the OptimizationJob page ui.mjs checks.
type optimizationExpectation struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Trials are the trials' names by index, Objectives their reported values ("-" none).
	Trials     []string `json:"trials"`
	Objectives []string `json:"objectives"`
	Best       string   `json:"best"`
	// Points is how many dots each parameter's scatter has: the trials that reported.
	Points map[string]int `json:"points"`
}

// optimization creates an OptimizationJob half way through its search, as the controller leaves
// it (no controller runs here), in a namespace of its own so that its trials (TrainJobs) change
// neither the Jobs page's rows nor the runtimes' counts the other checks expect.
func (f *fixture) optimization() optimizationExpectation {
	exp := optimizationExpectation{Namespace: "hpo", Name: "lr-search", Best: "lr-search-2",
		Points: map[string]int{"lr": 3, "optimizer": 3}}
	f.must(f.c.Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: exp.Namespace}}))
	oj := &trainer.OptimizationJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: exp.Name},
		Spec: trainer.OptimizationJobSpec{
			Objectives:      []trainer.Objective{{Metric: "loss", Direction: trainer.ObjectiveDirectionMinimize}},
			SearchAlgorithm: &trainer.SearchAlgorithm{Random: &trainer.RandomAlgorithm{Seed: ptr.To[int64](42)}},
			Parameters: []trainer.Parameter{
				{Name: "lr", SearchSpace: &trainer.SearchSpace{LogUniform: &trainer.LogUniformSpace{Min: "0.0001", Max: "0.1"}}},
				{Name: "optimizer", SearchSpace: &trainer.SearchSpace{Categorical: &trainer.CategoricalSpace{Choices: []string{"adam", "sgd"}}}},
			},
			NumTrials: 5, ParallelTrials: 2,
			TrainJobTemplate: trainer.TrainJobTemplateSpec{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "browser-hpo"}}},
		},
	}
	f.must(f.c.Create(f.ctx, oj))
	for i, tr := range []struct{ lr, opt, loss, state string }{
		{"0.0006", "adam", "0.42", "Complete"}, {"0.05", "sgd", "", "Failed"}, {"0.003", "adam", "0.17", "Complete"}, {"0.02", "sgd", "0.3", "Running"},
	} {
		name := optimization.TrialName(exp.Name, i)
		exp.Trials = append(exp.Trials, name)
		exp.Objectives = append(exp.Objectives, map[bool]string{true: tr.loss, false: "-"}[tr.loss != ""])
		tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: exp.Namespace, Name: name,
			Labels:          map[string]string{optimization.JobNameLabel: exp.Name, optimization.TrialIndexLabel: strconv.Itoa(i)},
			Annotations:     map[string]string{optimization.ParametersAnnotation: optimization.EncodeParameters([]trainer.ParameterAssignment{{Name: "lr", Value: tr.lr}, {Name: "optimizer", Value: tr.opt}})},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))}},
			Spec: oj.Spec.TrainJobTemplate.Spec}
		f.must(f.c.Create(f.ctx, tj))
		if tr.loss != "" {
			tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: tr.loss}}, LastUpdatedTime: metav1.Now()}
		}
		if tr.state == "Running" {
			tj.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](1), Failed: ptr.To[int32](0),
				Succeeded: ptr.To[int32](0), Suspended: ptr.To[int32](0)}}
		} else {
			tj.Status.Conditions = []metav1.Condition{{Type: tr.state, Status: metav1.ConditionTrue, Reason: tr.state, Message: "jobset ended", LastTransitionTime: metav1.Now()}}
		}
		f.must(f.c.Status().Update(f.ctx, tj))
	}
	oj.Status = trainer.OptimizationJobStatus{
		Conditions: []metav1.Condition{{Type: optimization.ConditionRunning, Status: metav1.ConditionTrue, Reason: optimization.ReasonTrialsRunning,
			Message: "3 of 5 trials finished (1 failed), 1 running", LastTransitionTime: metav1.Now()}},
		Result: &trainer.OptimizationResult{TrainJobName: exp.Best,
			Parameters: []trainer.ParameterAssignment{{Name: "lr", Value: "0.003"}, {Name: "optimizer", Value: "adam"}}},
	}
	f.must(f.c.Status().Update(f.ctx, oj))
	return exp
}
