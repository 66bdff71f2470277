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

package render

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/internal/crdschema"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// FuzzPipeline feeds random TrainJob and runtime specs through the whole pipeline: building the
// objects and validating them must return, never panic, whatever the specs hold, and two builds
// of the same specs must be byte-identical (issue 13 F2). The render runtime has no client, so a
// plugin that reached for one would panic here. The seeds are
// every TrainJob and runtime this repository ships or tests with.
func FuzzPipeline(f *testing.F) {
	var jobs, runtimes [][]byte
	for _, pattern := range []string{"../../examples/*.yaml", "../../config/runtimes/*.yaml", "testdata/inputs/*.yaml"} {
		files, err := filepath.Glob(pattern)
		if err != nil {
			f.Fatal(err)
		}
		for _, file := range files {
			if filepath.Base(file) == "kustomization.yaml" {
				continue
			}
			data, err := os.ReadFile(file)
			if err != nil {
				f.Fatal(err)
			}
			for doc := range strings.SplitSeq(string(data), "\n---\n") {
				var obj struct {
					Kind string          `json:"kind"`
					Spec json.RawMessage `json:"spec"`
				}
				if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
					f.Fatal(err)
				}
				if obj.Kind == trainer.TrainJobKind {
					jobs = append(jobs, obj.Spec)
				} else {
					runtimes = append(runtimes, obj.Spec)
				}
			}
		}
	}
	for i, j := range jobs {
		f.Add(j, runtimes[i%len(runtimes)], "torchtune-llama3.2-1b")
		f.Add(j, runtimes[(i+3)%len(runtimes)], "rt")
	}
	rt, err := NewRuntime()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, jobSpec, runtimeSpec []byte, runtimeName string) {
		tj := &trainer.TrainJob{}
		if json.Unmarshal(jobSpec, &tj.Spec) != nil {
			return
		}
		tj.Name, tj.Namespace, tj.UID = "job", "ns", "uid"
		ctr := &trainer.ClusterTrainingRuntime{}
		if json.Unmarshal(runtimeSpec, &ctr.Spec) != nil {
			return
		}
		ctr.Name = runtimeName
		first, err := renderPayloads(rt, tj.DeepCopy(), ctr.DeepCopy())
		if err != nil {
			t.Error(err)
		}
		// Determinism: the same inputs give byte-identical objects (a map walked in random
		// order, or a build that changes its inputs, would not).
		second, err := renderPayloads(rt, tj.DeepCopy(), ctr.DeepCopy())
		if err != nil {
			t.Error(err)
		}
		if !slices.EqualFunc(first, second, bytes.Equal) {
			t.Errorf("two renders of the same inputs differ:\n%s\n---\n%s", bytes.Join(first, nil), bytes.Join(second, nil))
		}
		old := tj.DeepCopy()
		old.Spec.RuntimePatches = nil
		rt.ValidateObjects(old, tj, ctr, nil)
	})
}

// renderPayloads renders the objects of a build as YAML; a build the pipeline refuses renders
// nothing. Objects completed at apply time (generated keys) are left out: they are random.
func renderPayloads(rt *core.Runtime, tj *trainer.TrainJob, ctr *trainer.ClusterTrainingRuntime) ([][]byte, error) {
	build, err := rt.NewObjects(context.Background(), tj, ctr, Observed(PlaceholderCA))
	if err != nil {
		return nil, nil
	}
	var out [][]byte
	for _, o := range build.Objects {
		if o.Complete != nil {
			continue
		}
		data, err := MarshalDocument(o.Object)
		if err != nil {
			return nil, fmt.Errorf("converting %T: %w", o.Object, err)
		}
		out = append(out, data)
	}
	return out, nil
}

// FuzzRead feeds arbitrary bytes to gantry render's pipeline: reading, validating and building
// must return, never panic, whatever the input (issue 13). The seeds are the shipped examples and
// runtimes and hostile shapes: aliases, deep nesting, invalid UTF-8, non-objects, huge numbers.
func FuzzRead(f *testing.F) {
	runtimeYAML, err := os.ReadFile("../../config/runtimes/torch-distributed.yaml")
	if err != nil {
		f.Fatal(err)
	}
	example, err := os.ReadFile("../../examples/01-torch-multi-node.yaml")
	if err != nil {
		f.Fatal(err)
	}
	job := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: torch-distributed}\n"
	for _, seed := range []string{
		string(example) + "---\n" + string(runtimeYAML),
		job + "  trainer: {numNodes: 99999999999999999999}\n---\n" + string(runtimeYAML),
		job + "  trainer: {command: &a [x, x]}\n  x: [*a, *a, *a]\n---\n" + string(runtimeYAML),
		job + "  trainer: {command: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "}\n",
		job + "metadata: {annotations: {a: \"\xff\"}}\n",
		"- a\n- b\n", "scalar\n", "---\n# only\n---\n", "{}\n---\n[]\n", `{"kind": "TrainJob", "apiVersion": "trainer.kubeflow.org/v1alpha1"}`,
	} {
		f.Add([]byte(seed))
	}
	schemas, err := crdschema.Load(crd.Bases)
	if err != nil {
		f.Fatal(err)
	}
	rt, err := NewRuntime()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := read([]Source{{Name: "fuzz", Data: bytes.NewReader(data)}}, schemas, DefaultNamespace)
		if err != nil {
			return
		}
		Validate(context.Background(), rt, in)
		if objs, err := Objects(context.Background(), rt, in); err == nil {
			if err := WriteYAML(io.Discard, objs); err != nil {
				t.Errorf("writing what was built: %v", err)
			}
		}
	})
}
