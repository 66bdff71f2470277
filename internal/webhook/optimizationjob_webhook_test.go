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

package webhook

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestValidateOptimizationJob(t *testing.T) {
	command := func(args ...string) *trainer.Trainer {
		return utiltesting.MakeTrainerWrapper().Container("img", args, nil).Obj()
	}
	base := func(name string) *utiltesting.OptimizationJobWrapper {
		return utiltesting.MakeOptimizationJobWrapper("ns", name).Trials(4, 2)
	}
	cases := map[string]struct {
		oj           *trainer.OptimizationJob
		wantErrs     []string
		wantWarnings admission.Warnings
	}{
		"valid random search": {
			oj: base("search").LogUniform("lr", "0.0001", "0.1", "").Categorical("opt", "adam", "sgd").
				Trainer(command("python", "--lr=${trialParameters.lr}", "--opt=${trialParameters.opt}")).Obj(),
		},
		"unknown parameter in command": {
			oj: base("search").LogUniform("lr", "0.0001", "0.1", "").
				Trainer(command("python", "--lr=${trialParameters.learning_rate}")).Obj(),
			wantErrs: []string{`spec.trainJobTemplate.spec.trainer.command[1]: Invalid value: "${trialParameters.learning_rate}": names no parameter of spec.parameters (lr)`},
		},
		"unknown parameter in env": {
			oj: base("search").Categorical("opt", "a").
				Trainer(utiltesting.MakeTrainerWrapper().Env(corev1.EnvVar{Name: "OPT", Value: "${trialParameters.optimizer}"}).Obj()).Obj(),
			wantErrs: []string{`spec.trainJobTemplate.spec.trainer.env[0].value: Invalid value: "${trialParameters.optimizer}": names no parameter of spec.parameters (opt)`},
		},
		"grid larger than numTrials": {
			oj:       base("search").Grid().Categorical("a", "1", "2", "3").Categorical("b", "x", "y").Obj(),
			wantErrs: []string{"spec.numTrials: Invalid value: 4: grid search over 6 combinations of the categorical choices needs numTrials of at least that"},
		},
		"grid smaller than numTrials": {
			oj:           base("search").Grid().Categorical("a", "1", "2", "3").Obj(),
			wantWarnings: admission.Warnings{"spec.numTrials: 4 exceeds the grid's 3 combinations; 3 trials run"},
		},
		"grid of exactly numTrials": {oj: base("search").Grid().Categorical("a", "1", "2").Categorical("b", "x", "y").Obj()},
		"name too long for its trials": {
			oj:       base(strings.Repeat("a", 61)).Categorical("a", "1").Obj(),
			wantErrs: []string{"metadata.name: Too long: may not be more than 60 bytes"},
		},
		"Int space without an integer": {
			oj:       base("search").Uniform("layers", "0.2", "0.8", trainer.ParameterTypeInt).Obj(),
			wantErrs: []string{`spec.parameters[0].searchSpace.uniform: Invalid value: "[0.2, 0.8]": type Int: holds no integer`},
		},
		"TTL on the trials": {
			oj:       base("search").Categorical("a", "1").TemplateAnnotation(knobs.TTLSecondsAfterFinished, "60").Obj(),
			wantErrs: []string{"spec.trainJobTemplate.metadata.annotations[ttl.gantry.dev/seconds-after-finished]: Forbidden: trials are kept until their OptimizationJob is deleted: a trial deleted earlier would be created again"},
		},
		"bad knobs": {
			oj: base("search").Categorical("a", "1").Annotation(knobs.OptimizationMaxFailedTrials, "many").
				Annotation("optimization.gantry.dev/max-failures", "1").Obj(),
			wantErrs: []string{
				`metadata.annotations[optimization.gantry.dev/max-failures]: Unsupported value: "optimization.gantry.dev/max-failures": supported values: "optimization.gantry.dev/max-failed-trials", "optimization.gantry.dev/suspend"`,
				`metadata.annotations[optimization.gantry.dev/max-failed-trials]: Invalid value: "many": must be an integer from 0 to 100`,
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			warnings, errs := ValidateOptimizationJob(tc.oj)
			if diff := cmp.Diff(tc.wantErrs, errorStrings(errs)); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want,+got):\n%s", diff)
			}
		})
	}
}

func errorStrings(errs field.ErrorList) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}
