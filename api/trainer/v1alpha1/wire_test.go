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

package v1alpha1

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

// TestWireRoundTrip decodes every shipped runtime and example strictly into the Go types and
// encodes them again: nothing may be unknown to the types, and nothing may change on the way.
func TestWireRoundTrip(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	files, err := filepath.Glob(filepath.Join(root, "config", "runtimes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, examples...)
	if len(files) == 0 {
		t.Fatal("no fixtures found")
	}
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, doc := range strings.Split(string(data), "\n---\n") {
			t.Run(filepath.Base(f)+"#"+string(rune('0'+i)), func(t *testing.T) {
				roundTrip(t, []byte(doc))
			})
		}
	}
}

func roundTrip(t *testing.T, doc []byte) {
	t.Helper()
	var meta struct{ Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		t.Fatal(err)
	}
	var obj any
	switch meta.Kind {
	case TrainJobKind:
		obj = &TrainJob{}
	case TrainingRuntimeKind:
		obj = &TrainingRuntime{}
	case ClusterTrainingRuntimeKind:
		obj = &ClusterTrainingRuntime{}
	default:
		t.Fatalf("unexpected kind %q", meta.Kind)
	}
	if err := yaml.UnmarshalStrict(doc, obj); err != nil {
		t.Fatalf("strict decode: %v", err)
	}
	got, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	want, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(normalize(t, want), normalize(t, got)); diff != "" {
		t.Errorf("round trip changed the object (-want,+got):\n%s", diff)
	}
}

// normalize decodes JSON generically, with numbers kept as written, and drops nulls and empty
// objects: the Kubernetes Go types write "metadata": {} and "resources": {} for unset structs,
// which carries no information.
func normalize(t *testing.T, data []byte) any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatal(err)
	}
	return prune(v)
}

func prune(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			e = prune(e)
			if m, ok := e.(map[string]any); e == nil || (ok && len(m) == 0) {
				delete(x, k)
				continue
			}
			x[k] = e
		}
		return x
	case []any:
		for i := range x {
			x[i] = prune(x[i])
		}
		return x
	default:
		return v
	}
}

func TestEmptyStatusIsOmitted(t *testing.T) {
	tj := TrainJob{Spec: TrainJobSpec{RuntimeRef: RuntimeRef{Name: "torch-distributed"}}}
	got, err := json.Marshal(&tj)
	if err != nil {
		t.Fatal(err)
	}
	// status has MinProperties=1: an empty object would be rejected by the apiserver.
	want := `{"metadata":{},"spec":{"runtimeRef":{"name":"torch-distributed"}}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Marshal() mismatch (-want,+got):\n%s", diff)
	}
}
