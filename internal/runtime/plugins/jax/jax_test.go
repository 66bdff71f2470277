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

package jax

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestEnforceMLPolicy(t *testing.T) {
	cases := map[string]struct {
		withTrainer bool
		wantEnv     []corev1.EnvVar
		wantCount   int32
	}{
		"trainer set": {
			withTrainer: true,
			wantCount:   4,
			wantEnv: []corev1.EnvVar{
				{Name: EnvNumProcesses, Value: "4"},
				runtime.CompletionIndexEnv(EnvProcessID),
				{Name: EnvCoordinatorAddress, Value: "jax-node-0-0.jax:29500"},
			},
		},
		"no trainer section: nothing injected": {wantCount: 1},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := utiltesting.MakeTrainingRuntimeSpecWrapper().JAX().Obj()
			w := utiltesting.MakeTrainJobWrapper("ns", "jax")
			if tc.withTrainer {
				w.Trainer(utiltesting.MakeTrainerWrapper().NumNodes(4).Obj())
			}
			tj := w.Obj()
			info, err := core.NewInfo(tj, "jax-distributed", &spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&JAX{}).EnforceMLPolicy(info, tj); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantEnv, info.TrainerContainer().Env); diff != "" {
				t.Errorf("env (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCount, info.PodSetByName("node").Count); diff != "" {
				t.Errorf("count (-want,+got):\n%s", diff)
			}
		})
	}
}
