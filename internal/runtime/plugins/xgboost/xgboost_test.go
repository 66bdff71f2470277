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

package xgboost

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestEnforceMLPolicy(t *testing.T) {
	gpus := func(n string) corev1.ResourceRequirements {
		return corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(n)}}
	}
	cases := map[string]struct {
		trainer       *trainer.Trainer
		wantNumWorker string
	}{
		"GPU nodes: one worker per GPU":  {trainer: utiltesting.MakeTrainerWrapper().NumNodes(3).ResourcesPerNode(gpus("2")).Obj(), wantNumWorker: "6"},
		"CPU nodes: one worker per node": {trainer: utiltesting.MakeTrainerWrapper().NumNodes(3).Obj(), wantNumWorker: "3"},
		"runtime node count when unset":  {trainer: utiltesting.MakeTrainerWrapper().Obj(), wantNumWorker: "2"},
		"user env comes before the DMLC": {trainer: utiltesting.MakeTrainerWrapper().Env(corev1.EnvVar{Name: "U", Value: "1"}).Obj(), wantNumWorker: "2"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).XGBoost().Obj()
			tj := utiltesting.MakeTrainJobWrapper("ns", "xgb").Trainer(tc.trainer).Obj()
			info, err := core.NewInfo(tj, "xgboost-distributed", &spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&XGBoost{}).EnforceMLPolicy(info, tj); err != nil {
				t.Fatal(err)
			}
			want := append([]corev1.EnvVar(nil), tc.trainer.Env...)
			want = append(want,
				corev1.EnvVar{Name: EnvTrackerURI, Value: "xgb-node-0-0.xgb"},
				corev1.EnvVar{Name: EnvTrackerPort, Value: "29500"},
				runtime.CompletionIndexEnv(EnvTaskID),
				corev1.EnvVar{Name: EnvNumWorker, Value: tc.wantNumWorker},
			)
			node := info.TrainerContainer()
			if diff := cmp.Diff(want, node.Env); diff != "" {
				t.Errorf("env (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff([]corev1.ContainerPort{{ContainerPort: 29500}}, node.Ports); diff != "" {
				t.Errorf("ports (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().XGBoost().Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "xgb").Trainer(utiltesting.MakeTrainerWrapper().Env(
		corev1.EnvVar{Name: "OK", Value: "1"}, corev1.EnvVar{Name: EnvNumWorker, Value: "9"}, corev1.EnvVar{Name: EnvTaskID, Value: "0"},
	).Obj()).Obj()
	info, err := core.NewInfo(tj, "xgboost-distributed", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, errs := (&XGBoost{}).Validate(info, nil, tj)
	want := "[spec.trainer.env[1]: Forbidden: DMLC_NUM_WORKER is reserved for the XGBoost runtime, " +
		"spec.trainer.env[2]: Forbidden: DMLC_TASK_ID is reserved for the XGBoost runtime]"
	if diff := cmp.Diff(want, errs.ToAggregate().Error()); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
}
