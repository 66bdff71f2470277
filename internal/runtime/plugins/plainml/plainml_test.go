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

package plainml

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestEnforceMLPolicy(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "plain").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(5).
		Env(corev1.EnvVar{Name: "A", Value: "1"}).Obj()).Obj()
	info, err := core.NewInfo(tj, "plain", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&PlainML{}).EnforceMLPolicy(info, tj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int32(5), info.PodSetByName("node").Count); diff != "" {
		t.Errorf("count (-want,+got):\n%s", diff)
	}
	// The user's env and nothing else.
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "A", Value: "1"}}, info.TrainerContainer().Env); diff != "" {
		t.Errorf("env (-want,+got):\n%s", diff)
	}
	if got := info.TrainerContainer().Ports; len(got) != 0 {
		t.Errorf("ports = %v, want none", got)
	}
}
