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
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// render prints what the controller would create for tj, with the pipeline of `gantry render`.
// The runtime comes from the file, else the cluster, else the runtimes Gantry ships.
func (t *trainOptions) render(ctx context.Context, tj *unstructured.Unstructured, extra []*unstructured.Unstructured) error {
	var sources []render.Source
	for i, d := range append([]*unstructured.Unstructured{tj}, extra...) {
		data, err := toYAML(d.Object)
		if err != nil {
			return err
		}
		sources = append(sources, render.Source{Name: fmt.Sprintf("%s[%d]", sourceName(t.file), i), Data: bytes.NewReader(data)})
	}
	in, err := render.ReadFinding(sources, "", t.runtimeFinder(ctx, runtimeSourceAuto))
	if render.IsInputError(err) {
		return withCode(ExitUsage, err)
	}
	if err != nil {
		return err
	}
	rt, err := render.NewRuntime()
	if err != nil {
		return err
	}
	if err := t.admit(ctx, rt, in); err != nil {
		return err
	}
	objs, err := render.Objects(ctx, rt, in)
	if err != nil {
		return err
	}
	return render.WriteYAML(t.Streams.Out, objs)
}

// admit runs the admission checks of the cluster on the input: warnings are printed, refusals
// are a usage error listing each with its field.
func (o *Options) admit(ctx context.Context, rt *core.Runtime, in *render.Input) error {
	warnings, errs := render.Validate(ctx, rt, in)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: %s\n", w)
	}
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = render.FormatError(e)
	}
	return usageErrorf("the cluster would refuse this TrainJob:\n  %s", strings.Join(msgs, "\n  "))
}

func sourceName(file string) string {
	if file == "" {
		return "flags"
	}
	return file
}

// Where runtimeFinder looks for a runtime the files lack.
const (
	runtimeSourceAuto    = "auto"    // the cluster, else the shipped runtimes
	runtimeSourceCluster = "cluster" // the cluster only
	runtimeSourceShipped = "shipped" // the shipped runtimes only
)

// runtimeFinder finds the runtime a TrainJob's files lack: on the cluster of the kubeconfig
// (read only), then among the runtimes Gantry ships, as source allows. It is the one place where
// train --dry-run=client and run --local get a runtime.
func (o *Options) runtimeFinder(ctx context.Context, source string) render.RuntimeFinder {
	return func(kind, namespace, name string) (*render.Source, error) {
		var clusterErr error
		if source != runtimeSourceShipped {
			var src *render.Source
			src, clusterErr = o.clusterRuntime(ctx, kind, namespace, name)
			switch {
			case src != nil:
				return src, nil
			case source == runtimeSourceCluster && clusterErr != nil:
				return nil, fmt.Errorf("reading %s %q from the cluster: %w", kind, name, clusterErr)
			case source == runtimeSourceCluster:
				return nil, withCode(ExitNotFound, fmt.Errorf("%s %q is neither in the files nor on the cluster", kind, name))
			}
		}
		src, err := render.ShippedRuntime(kind, namespace, name)
		if err != nil || src == nil {
			return nil, withCode(ExitNotFound, fmt.Errorf("%s %q not found in the files, on the cluster or among the runtimes Gantry ships", kind, name))
		}
		switch {
		case source == runtimeSourceAuto && clusterErr != nil:
			_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: using the %s %q Gantry ships: the cluster could not be asked (%v)\n", kind, name, clusterErr)
		case source == runtimeSourceAuto:
			_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: using the %s %q Gantry ships: it is not on the cluster\n", kind, name)
		}
		return src, nil
	}
}

// clusterRuntime reads a runtime from the cluster as YAML; nil when it is not there.
func (o *Options) clusterRuntime(ctx context.Context, kind, namespace, name string) (*render.Source, error) {
	if _, err := o.ConfigFlags.ToRESTConfig(); err != nil {
		return nil, err
	}
	reader, err := o.Reader()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var obj client.Object = &trainer.ClusterTrainingRuntime{}
	if kind == trainer.TrainingRuntimeKind {
		obj = &trainer.TrainingRuntime{}
	}
	if err := reader.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(trainer.GroupVersion.WithKind(kind))
	// As the controller snapshots it (uid and resourceVersion included), but for managedFields.
	obj.SetManagedFields(nil)
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &render.Source{Name: "the cluster's " + kind + " " + name, Data: bytes.NewReader(data)}, nil
}
