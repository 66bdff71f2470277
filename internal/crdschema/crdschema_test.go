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
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gantry-ml/gantry/config/crd"
)

var trainJobGVK = schema.GroupVersionKind{Group: "trainer.kubeflow.org", Version: "v1alpha1", Kind: "TrainJob"}

func load(t *testing.T) *Schemas {
	t.Helper()
	s, err := Load(crd.Bases)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDefault(t *testing.T) {
	s := load(t)
	obj := map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "job"},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": "torch"},
			"trainer":    map[string]any{"numNodes": int64(2), "gpus": int64(8)},
			"extra":      true,
		},
	}
	unknown, err := s.Default(trainJobGVK, obj)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"spec.extra", "spec.trainer.gpus"}, unknown); diff != "" {
		t.Errorf("unknown fields (-want,+got):\n%s", diff)
	}
	want := map[string]any{
		"runtimeRef": map[string]any{"name": "torch", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"},
		"trainer":    map[string]any{"numNodes": int64(2)},
		"suspend":    false,
		"managedBy":  "trainer.kubeflow.org/trainjob-controller",
	}
	if diff := cmp.Diff(want, obj["spec"]); diff != "" {
		t.Errorf("defaulted spec (-want,+got):\n%s", diff)
	}
	if !s.Has(trainJobGVK) || s.Has(schema.GroupVersionKind{Group: "x", Version: "v1", Kind: "Y"}) {
		t.Error("Has() does not reflect the loaded kinds")
	}
}

func TestValidate(t *testing.T) {
	s := load(t)
	obj := map[string]any{
		"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob",
		"metadata": map[string]any{"name": "Job", "namespace": "ns", "labels": map[string]any{"bad key!": "x"}},
		"spec": map[string]any{
			"runtimeRef": map[string]any{"name": "torch"},
			"trainer": map[string]any{"numNodes": int64(-1), "env": []any{
				map[string]any{"name": "A", "value": "1"}, map[string]any{"name": "A", "value": "2"},
			}},
			"managedBy": "someone",
		},
	}
	var got []string
	for _, e := range s.Validate(context.Background(), trainJobGVK, obj) {
		got = append(got, e.Field+": "+e.Detail)
	}
	// The apiserver's order: metadata, schema, list-map keys, CEL.
	want := []string{
		`metadata.name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
		`metadata.labels: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
		"spec.trainer.numNodes: spec.trainer.numNodes in body should be greater than or equal to 0",
		"spec.trainer.env[1]: ",
		"<nil>: metadata.name must match RFC 1035 DNS label format",
		"spec.managedBy: ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
}
