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

package plugins

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestBuiltinOrder pins the registry order: it is the execution order inside every extension
// point, so changing it changes what the controller builds.
func TestBuiltinOrder(t *testing.T) {
	var got []string
	for _, e := range Builtin() {
		got = append(got, e.Name)
	}
	want := []string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "Volcano", "TrainJobStatus", "JobSet"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Builtin() order (-want,+got):\n%s", diff)
	}
	for name, tc := range map[string]struct {
		opts framework.Options
		want []string
	}{
		"status server on":  {opts: framework.Options{StatusServerURL: func(_, _ string) string { return "https://x" }}, want: want},
		"status server off": {want: []string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "Volcano", "JobSet"}},
	} {
		fwk, err := framework.New(Builtin(), tc.opts)
		if err != nil {
			t.Fatalf("%s: framework.New(Builtin()) error: %v", name, err)
		}
		got = nil
		for _, p := range fwk.Plugins() {
			got = append(got, p.Name())
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: framework plugin order (-want,+got):\n%s", name, diff)
		}
	}
}

// TestPluginsLeftOutWithoutTheirCRD: a gang plugin whose PodGroup CRD is not installed is not
// part of the framework, and the framework names every kind the others own, once.
func TestPluginsLeftOutWithoutTheirCRD(t *testing.T) {
	fwk, err := framework.New(Builtin(), framework.Options{
		Installed: func(gvk schema.GroupVersionKind) bool { return gvk.Group == "scheduling.x-k8s.io" },
	})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range fwk.Plugins() {
		got = append(got, p.Name())
	}
	if diff := cmp.Diff([]string{"PlainML", "Torch", "MPI", "JAX", "XGBoost", "Flux", "CoScheduling", "JobSet"}, got); diff != "" {
		t.Errorf("plugins (-want,+got):\n%s", diff)
	}
	var kinds []string
	for _, k := range fwk.OwnedKinds() {
		kinds = append(kinds, k.GVK.String())
	}
	if diff := cmp.Diff([]string{"scheduling.x-k8s.io/v1alpha1, Kind=PodGroup"}, kinds); diff != "" {
		t.Errorf("owned kinds (-want,+got):\n%s", diff)
	}
}

// TestNoPodGroupWithoutPolicy: the gang plugins build nothing for a runtime without a pod group
// policy, because the framework does not run them.
func TestNoPodGroupWithoutPolicy(t *testing.T) {
	rt, err := NewRuntime(framework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("torch").Spec(
		utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch").Obj()
	build, err := rt.NewObjects(context.Background(), tj, ctr, nil)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, o := range build.Objects {
		kinds = append(kinds, o.GetObjectKind().GroupVersionKind().Kind)
	}
	if diff := cmp.Diff([]string{"ConfigMap", "JobSet"}, kinds); diff != "" {
		t.Errorf("objects (-want,+got):\n%s", diff)
	}
}
