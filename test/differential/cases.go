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

package differential

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	goruntime "runtime"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	utiljson "k8s.io/apimachinery/pkg/util/json"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/manifest"
)

// Case is a runtime and a TrainJob that references it, as their manifests.
type Case struct {
	Name     string
	Runtime  map[string]any
	TrainJob map[string]any
}

// normalize makes the numbers of a decoded manifest int64 where they are whole, as the
// apiserver's decoder does; CEL rules on integers refuse float64.
func normalize(obj map[string]any) map[string]any {
	data, err := json.Marshal(obj)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := utiljson.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return out
}

// DeepCopy copies the case, so mutations leave the seed alone.
func (c *Case) DeepCopy() *Case {
	return &Case{Name: c.Name, Runtime: runtime.DeepCopyJSON(c.Runtime), TrainJob: runtime.DeepCopyJSON(c.TrainJob)}
}

func repoRoot() string {
	_, file, _, _ := goruntime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// Seeds are the project's own fixtures: every example TrainJob with its runtime, and a
// minimal TrainJob for every shipped runtime.
func Seeds() ([]*Case, error) {
	root := repoRoot()
	shipped := map[string]map[string]any{}
	runtimeFiles, err := filepath.Glob(filepath.Join(root, "config", "runtimes", "*.yaml"))
	if err != nil {
		return nil, err
	}
	var cases []*Case
	for _, f := range runtimeFiles {
		objs, err := manifest.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			if o.GetKind() != trainer.ClusterTrainingRuntimeKind {
				continue
			}
			shipped[o.GetName()] = o.Object
			cases = append(cases, &Case{Name: "runtime " + o.GetName(), Runtime: o.Object, TrainJob: map[string]any{
				"apiVersion": trainer.GroupVersion.String(), "kind": trainer.TrainJobKind,
				"metadata": map[string]any{"name": "job", "namespace": "default"},
				"spec":     map[string]any{"runtimeRef": map[string]any{"name": o.GetName()}},
			}})
		}
	}
	examples, err := filepath.Glob(filepath.Join(root, "examples", "*.yaml"))
	if err != nil {
		return nil, err
	}
	for _, f := range examples {
		c, err := exampleCase(f, shipped)
		if err != nil {
			return nil, err
		}
		cases = append(cases, c)
	}
	for _, c := range cases {
		c.Runtime, c.TrainJob = normalize(c.Runtime), normalize(c.TrainJob)
	}
	return cases, nil
}

func exampleCase(path string, shipped map[string]map[string]any) (*Case, error) {
	objs, err := manifest.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var tj *unstructured.Unstructured
	local := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		if o.GetKind() == trainer.TrainJobKind {
			tj = o
		} else {
			local[o.GetName()] = o
		}
	}
	if tj == nil {
		return nil, fmt.Errorf("%s: no TrainJob", path)
	}
	if tj.GetNamespace() == "" {
		tj.SetNamespace("default")
	}
	ref, _, _ := unstructured.NestedString(tj.Object, "spec", "runtimeRef", "name")
	c := &Case{Name: "example " + filepath.Base(path), TrainJob: tj.Object}
	if rt, ok := local[ref]; ok {
		if rt.GetKind() == trainer.TrainingRuntimeKind {
			rt.SetNamespace(tj.GetNamespace())
		}
		c.Runtime = rt.Object
	} else if rt, ok := shipped[ref]; ok {
		c.Runtime = rt
	} else {
		return nil, fmt.Errorf("%s: runtime %q is neither in the file nor in config/runtimes", path, ref)
	}
	return c, nil
}
