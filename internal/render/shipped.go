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
	"bufio"
	"bytes"
	"errors"
	"io"
	"io/fs"

	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	shipped "github.com/gantry-ml/gantry/config/runtimes"
)

// ShippedRuntime is a RuntimeFinder over the ClusterTrainingRuntimes Gantry ships
// (config/runtimes): the runtime of a TrainJob that is neither in its files nor on a cluster.
func ShippedRuntime(kind, _, name string) (*Source, error) {
	if kind != trainer.ClusterTrainingRuntimeKind {
		return nil, nil
	}
	files, err := fs.Glob(shipped.Files, "*.yaml")
	if err != nil {
		return nil, err
	}
	for _, file := range files {
		if !shipped.IsRuntime(file) {
			continue
		}
		data, err := shipped.Files.ReadFile(file)
		if err != nil {
			return nil, err
		}
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return nil, err
			}
			var meta struct {
				Kind     string `json:"kind"`
				Metadata struct {
					Name string `json:"name"`
				} `json:"metadata"`
			}
			if yaml.Unmarshal(doc, &meta) == nil && meta.Kind == kind && meta.Metadata.Name == name {
				return &Source{Name: "the shipped runtime " + name + " (config/runtimes/" + file + ")", Data: bytes.NewReader(doc)}, nil
			}
		}
	}
	return nil, nil
}
