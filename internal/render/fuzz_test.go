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
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// FuzzPipeline feeds random TrainJob and runtime specs through the whole pipeline: building the
// objects and validating them must return, never panic, whatever the specs hold. The seeds are
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
		build, err := rt.NewObjects(context.Background(), tj, ctr, Observed(PlaceholderCA))
		if err == nil {
			for _, o := range build.Objects {
				if o.Complete != nil {
					continue // key generation is not under test
				}
				if _, err := toYAML(o.Object); err != nil {
					t.Errorf("converting %T: %v", o.Object, err)
				}
			}
		}
		old := tj.DeepCopy()
		old.Spec.RuntimePatches = nil
		rt.ValidateObjects(old, tj, ctr, nil)
	})
}

func toYAML(obj any) ([]byte, error) {
	return yaml.Marshal(obj)
}
