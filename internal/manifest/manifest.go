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

// Package manifest reads Kubernetes objects from multi-document YAML (or JSON) streams and files,
// as kubectl apply -f reads them: empty documents are skipped, any other document needs a kind.
package manifest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/yaml"
)

// Decode returns the objects of every non-empty document of data, in order.
func Decode(data []byte) ([]*unstructured.Unstructured, error) {
	dec := yaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var objs []*unstructured.Unstructured
	for doc := 1; ; doc++ {
		obj := &unstructured.Unstructured{}
		err := dec.Decode(&obj.Object)
		if errors.Is(err, io.EOF) {
			return objs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("document %d: %w", doc, err)
		}
		if len(obj.Object) == 0 {
			continue
		}
		if obj.GetKind() == "" {
			return nil, fmt.Errorf("document %d has no kind", doc)
		}
		objs = append(objs, obj)
	}
}

// ReadPath returns the objects of the file path names or, for a directory, of its *.yaml files
// in name order. Hidden files (a mounted ConfigMap's ..data entries) are skipped. Errors name the
// file.
func ReadPath(path string) ([]*unstructured.Unstructured, error) {
	files, err := Files(path)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		fileObjs, err := ReadFile(f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, fileObjs...)
	}
	return objs, nil
}

// Files returns path itself, or for a directory its *.yaml files but the hidden ones, in name
// order.
func Files(path string) ([]string, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return []string{path}, nil
	}
	matches, err := filepath.Glob(filepath.Join(path, "*.yaml"))
	if err != nil {
		return nil, err
	}
	files := matches[:0]
	for _, f := range matches {
		if !strings.HasPrefix(filepath.Base(f), ".") {
			files = append(files, f)
		}
	}
	sort.Strings(files)
	return files, nil
}

// ReadFile returns the objects of one file; errors name it.
func ReadFile(path string) ([]*unstructured.Unstructured, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	objs, err := Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return objs, nil
}
