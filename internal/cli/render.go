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

package cli

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/runtimes"
	"github.com/gantry-ml/gantry/internal/render"
)

// render prints what the controller would create for tj, with the pipeline of `gantry render`.
// The runtime comes from the file, else the cluster, else the runtimes Gantry ships.
func (t *trainOptions) render(ctx context.Context, tj *unstructured.Unstructured, extra []*unstructured.Unstructured) error {
	docs := append([]*unstructured.Unstructured{tj}, extra...)
	if !hasRuntime(tj, extra) {
		rt, err := t.runtimeDocument(ctx, tj)
		if err != nil {
			return err
		}
		docs = append(docs, rt)
	}
	var sources []render.Source
	for i, d := range docs {
		data, err := toYAML(d.Object)
		if err != nil {
			return err
		}
		sources = append(sources, render.Source{Name: fmt.Sprintf("%s[%d]", sourceName(t.file), i), Data: bytes.NewReader(data)})
	}
	in, err := render.Read(sources)
	if err != nil {
		return withCode(ExitUsage, err)
	}
	rt, err := render.NewRuntime()
	if err != nil {
		return err
	}
	warnings, errs := render.Validate(ctx, rt, in)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(t.Streams.ErrOut, "warning: %s\n", w)
	}
	if len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = render.FormatError(e)
		}
		return usageErrorf("the cluster would refuse this TrainJob:\n  %s", strings.Join(msgs, "\n  "))
	}
	objs, err := render.Objects(ctx, rt, in)
	if err != nil {
		return err
	}
	return render.WriteYAML(t.Streams.Out, objs)
}

func sourceName(file string) string {
	if file == "" {
		return "flags"
	}
	return file
}

func hasRuntime(tj *unstructured.Unstructured, docs []*unstructured.Unstructured) bool {
	name, _, _ := unstructured.NestedString(tj.Object, "spec", "runtimeRef", "name")
	for _, d := range docs {
		if d.GetName() == name && (d.GetKind() == trainer.TrainingRuntimeKind || d.GetKind() == trainer.ClusterTrainingRuntimeKind) {
			return true
		}
	}
	return false
}

// runtimeDocument reads the runtime tj references from the cluster, else from the shipped ones.
func (t *trainOptions) runtimeDocument(ctx context.Context, tj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	name, _, _ := unstructured.NestedString(tj.Object, "spec", "runtimeRef", "name")
	if t.cfgAvailable() {
		if r, err := t.Reader(); err == nil {
			if rt, obj, err := r.GetRuntime(ctx, tj.GetNamespace(), name); err == nil {
				obj.SetManagedFields(nil)
				u, err := toUnstructured(obj)
				if err != nil {
					return nil, err
				}
				u.SetGroupVersionKind(trainer.GroupVersion.WithKind(rt.Kind))
				return u, nil
			}
		}
	}
	entries, err := fs.Glob(runtimes.Files, "*.yaml")
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !runtimes.IsRuntime(e) {
			continue
		}
		data, err := runtimes.Files.ReadFile(e)
		if err != nil {
			return nil, err
		}
		docs, err := decodeDocuments(e, data)
		if err != nil {
			return nil, err
		}
		for _, d := range docs {
			if d.GetKind() == trainer.ClusterTrainingRuntimeKind && d.GetName() == name {
				_, _ = fmt.Fprintf(t.Streams.ErrOut, "warning: using the ClusterTrainingRuntime %q Gantry ships: it is not on the cluster, or the cluster cannot be reached\n", name)
				return d, nil
			}
		}
	}
	return nil, withCode(ExitNotFound, fmt.Errorf("runtime %q not found in the file, on the cluster or among the runtimes Gantry ships", name))
}
