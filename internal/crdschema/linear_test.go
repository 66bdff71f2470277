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

package crdschema

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var runtimeGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "ClusterTrainingRuntime"}

// container is a runtime container with an invalid quantity (an int-or-string anyOf), a port out
// of its int32 format and an unknown pull policy.
func container(name string) map[string]any {
	return map[string]any{
		"name": name, "image": "x", "imagePullPolicy": "Sometimes",
		"ports":     []any{map[string]any{"containerPort": int64(1) << 40}, map[string]any{}},
		"resources": map[string]any{"limits": map[string]any{"cpu": "lots"}},
	}
}

func badRuntime() map[string]any {
	job := func(name string, containers ...any) any {
		return map[string]any{"name": name, "replicas": "two", "template": map[string]any{"spec": map[string]any{
			"template": map[string]any{"spec": map[string]any{"containers": containers}},
		}}}
	}
	return map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "ClusterTrainingRuntime", "metadata": map[string]any{"name": "rt"},
		"spec": map[string]any{
			"mlPolicy": map[string]any{"numNodes": "four", "torch": map[string]any{"numProcPerNode": []any{}}},
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{
				job("a", container("x"), container("y")), job("b", map[string]any{}), 7,
			}}},
		},
	}
}

// The collector gives the errors of the apiserver's own validator, paths and messages alike,
// for objects with many kinds of errors at many depths.
func TestLinearValidatorMatchesTheApiserver(t *testing.T) {
	s := load(t)
	cases := map[string]struct {
		gvk schema.GroupVersionKind
		obj map[string]any
	}{
		"a runtime: types, formats, enums, int-or-string, required, at every depth": {gvk: runtimeGVK, obj: badRuntime()},
		"a TrainJob: types, bounds, patterns": {gvk: trainJobGVK, obj: map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": map[string]any{"name": "job"},
			"spec": map[string]any{
				"runtimeRef": map[string]any{"name": "", "kind": "Other"},
				"trainer": map[string]any{
					"numNodes": int64(-3), "numProcPerNode": "x", "command": []any{"ok", int64(1), nil},
					"env": []any{map[string]any{"value": "no name"}, "string", map[string]any{"name": "A", "valueFrom": 3}},
				},
				"runtimePatches": []any{map[string]any{"manager": "m", "trainingRuntimeSpec": map[string]any{"template": 1}}},
			},
		}},
		"a valid TrainJob": {gvk: trainJobGVK, obj: map[string]any{
			"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": map[string]any{"name": "job"},
			"spec": map[string]any{"runtimeRef": map[string]any{"name": "torch"}},
		}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			openapi := s.kinds[tc.gvk].openapi
			want := errorStrings(apiservervalidation.ValidateCustomResource(nil, tc.obj, apiservervalidation.NewSchemaValidatorFromOpenAPI(openapi)))
			var truncated bool
			got := errorStrings(apiservervalidation.ValidateCustomResource(nil, tc.obj, linearValidator{schema: openapi, limit: MaxErrors, truncated: &truncated}))
			// Both walk the properties in map order: compare the sets.
			slices.Sort(want)
			slices.Sort(got)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("errors (-apiserver,+linear):\n%s", diff)
			}
			if truncated {
				t.Error("truncated, want every error")
			}
		})
	}
}

func errorStrings(errs field.ErrorList) []string {
	out := make([]string, 0, len(errs))
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

// The apiserver's validator compares each new error with every one already found: a list of a
// 200,000 wrong items took hours. Validate stops at MaxErrors, and says so.
func TestValidateStopsAtMaxErrors(t *testing.T) {
	s := load(t)
	jobs := make([]any, 200_000)
	for i := range jobs {
		jobs[i] = int64(i)
	}
	obj := badRuntime()
	obj["spec"].(map[string]any)["template"] = map[string]any{"spec": map[string]any{"replicatedJobs": jobs}}
	start := time.Now()
	errs := s.Validate(context.Background(), runtimeGVK, obj)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Validate took %v, want a few seconds at most", elapsed)
	}
	if len(errs) != MaxErrors+1 {
		t.Fatalf("Validate returned %d errors, want %d and the cut-off", len(errs), MaxErrors)
	}
	if diff := cmp.Diff("Too many: the checks stopped after 100 errors", errs[MaxErrors].ErrorBody()); diff != "" {
		t.Errorf("last error (-want,+got):\n%s", diff)
	}
}

// A list longer than its maxItems is refused without its items being checked, so an over-long
// list of wrong items costs one error.
func TestValidateTooLongListSkipsItsItems(t *testing.T) {
	s := load(t)
	command := make([]any, 10_000)
	for i := range command {
		command[i] = int64(i)
	}
	obj := map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": map[string]any{"name": "job", "namespace": "ns"},
		"spec": map[string]any{"runtimeRef": map[string]any{"name": "torch"}, "trainer": map[string]any{"command": command}},
	}
	got := errorStrings(s.Validate(context.Background(), trainJobGVK, obj))
	want := []string{"spec.trainer.command: Too many: 10000: must have at most 128 items"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
}
