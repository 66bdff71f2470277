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

// Package render turns a TrainJob and its runtime, read from YAML, into the objects the controller
// would apply, or into the admission verdict on them. No cluster is involved: the CRD schemas
// embedded in the binary default and validate the input as the apiserver would.
package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsyaml "sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/internal/crdschema"
)

// DefaultNamespace is used for objects that name none, as kubectl would.
const DefaultNamespace = "default"

// Source is one input: a file name (or "-" for standard input) and its content.
type Source struct {
	Name string
	Data io.Reader
}

// Document is one decoded input object, kept as unstructured for schema validation.
type Document struct {
	Source string
	Index  int
	Object *unstructured.Unstructured
}

// Where names the document in error messages.
func (d *Document) Where() string {
	return fmt.Sprintf("%s (document %d, %s %q)", d.Source, d.Index+1, d.Object.GetKind(), d.Object.GetName())
}

// Input is the decoded and defaulted input.
type Input struct {
	TrainJob         *trainer.TrainJob
	TrainJobDocument *Document
	Runtime          client.Object
	RuntimeDocument  *Document
	Schemas          *crdschema.Schemas
	// StatusServerCA goes into the <trainjob>-tls-config ConfigMap; Read sets PlaceholderCA.
	StatusServerCA string
}

// InputError is bad input: the caller exits with code 2.
type InputError struct{ msg string }

func (e *InputError) Error() string { return e.msg }

func inputErrorf(format string, args ...any) error {
	return &InputError{msg: fmt.Sprintf(format, args...)}
}

// IsInputError reports whether err is bad input.
func IsInputError(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}

var kinds = map[string]bool{
	trainer.TrainJobKind: true, trainer.TrainingRuntimeKind: true, trainer.ClusterTrainingRuntimeKind: true,
}

// Read decodes every document of the sources, applies the CRD schema defaults, and picks the one
// TrainJob and the runtime it references.
func Read(sources []Source) (*Input, error) {
	schemas, err := crdschema.Load(crd.Bases)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded CRDs: %w", err)
	}
	in := &Input{Schemas: schemas, StatusServerCA: PlaceholderCA}
	var docs []*Document
	for _, src := range sources {
		d, err := decodeAll(src, schemas)
		if err != nil {
			return nil, err
		}
		docs = append(docs, d...)
	}
	var runtimes []*Document
	for _, d := range docs {
		if d.Object.GetKind() != trainer.TrainJobKind {
			runtimes = append(runtimes, d)
			continue
		}
		if in.TrainJobDocument != nil {
			return nil, inputErrorf("%s: a second TrainJob; give exactly one (the first is in %s)", d.Where(), in.TrainJobDocument.Where())
		}
		in.TrainJobDocument = d
	}
	if in.TrainJobDocument == nil {
		return nil, inputErrorf("no TrainJob in the input: give one with -f")
	}
	in.TrainJob = &trainer.TrainJob{}
	if err := in.toTyped(in.TrainJobDocument, in.TrainJob); err != nil {
		return nil, err
	}
	return in, in.pickRuntime(runtimes)
}

func (in *Input) pickRuntime(runtimes []*Document) error {
	ref := in.TrainJob.Spec.RuntimeRef
	kind := *ref.Kind
	if *ref.APIGroup != trainer.GroupVersion.Group || !kinds[kind] || kind == trainer.TrainJobKind {
		return inputErrorf("%s: spec.runtimeRef: unsupported runtime: %s.%s", in.TrainJobDocument.Where(), kind, *ref.APIGroup)
	}
	for _, d := range runtimes {
		if d.Object.GetKind() != kind || d.Object.GetName() != ref.Name {
			continue
		}
		if kind == trainer.TrainingRuntimeKind && d.Object.GetNamespace() != in.TrainJob.Namespace {
			continue
		}
		in.RuntimeDocument = d
		if kind == trainer.TrainingRuntimeKind {
			in.Runtime = &trainer.TrainingRuntime{}
		} else {
			in.Runtime = &trainer.ClusterTrainingRuntime{}
		}
		return in.toTyped(d, in.Runtime)
	}
	where := ""
	if kind == trainer.TrainingRuntimeKind {
		where = fmt.Sprintf(" in namespace %q", in.TrainJob.Namespace)
	}
	return inputErrorf("%s: spec.runtimeRef: %s %q%s is not in the input: add its file with -f", in.TrainJobDocument.Where(), kind, ref.Name, where)
}

func decodeAll(src Source, schemas *crdschema.Schemas) ([]*Document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(src.Data))
	var docs []*Document
	for i := 0; ; i++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, inputErrorf("%s: reading document %d: %v", src.Name, i+1, err)
		}
		if len(bytes.TrimSpace(raw)) == 0 {
			i--
			continue
		}
		obj := &unstructured.Unstructured{}
		// A key given twice is refused, as the apiserver's strict decoding does, instead of the
		// last one silently winning; the strict decoder's numbers are all float64, so it only checks.
		var strict any
		if err := sigsyaml.UnmarshalStrict(raw, &strict); err != nil {
			msg := strings.Join(strings.Fields(err.Error()), " ")
			return nil, inputErrorf("%s: document %d: malformed YAML: %s", src.Name, i+1, msg)
		}
		if err := utilyaml.Unmarshal(raw, &obj.Object); err != nil {
			return nil, inputErrorf("%s: document %d: malformed YAML: %v", src.Name, i+1, err)
		}
		if len(obj.Object) == 0 {
			i--
			continue
		}
		d := &Document{Source: src.Name, Index: i, Object: obj}
		if err := prepare(d, schemas); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

// prepare checks the kind, sets the default namespace and applies the schema defaults.
func prepare(d *Document, schemas *crdschema.Schemas) error {
	gvk := d.Object.GroupVersionKind()
	if gvk.Group != trainer.GroupVersion.Group || !kinds[gvk.Kind] {
		return inputErrorf("%s: document %d: unknown kind %q (apiVersion %q): want TrainJob, TrainingRuntime or ClusterTrainingRuntime of %s",
			d.Source, d.Index+1, gvk.Kind, d.Object.GetAPIVersion(), trainer.GroupVersion)
	}
	if !schemas.Has(gvk) {
		return inputErrorf("%s: document %d: unknown version %q of %s", d.Source, d.Index+1, gvk.Version, gvk.Kind)
	}
	if d.Object.GetName() == "" {
		return inputErrorf("%s: document %d: metadata.name: required", d.Source, d.Index+1)
	}
	if gvk.Kind != trainer.ClusterTrainingRuntimeKind && d.Object.GetNamespace() == "" {
		d.Object.SetNamespace(DefaultNamespace)
	}
	unknown, err := schemas.Default(gvk, d.Object.Object)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return inputErrorf("%s: unknown field %q", d.Where(), strings.Join(unknown, `", "`))
	}
	return nil
}

func (in *Input) toTyped(d *Document, into runtime.Object) error {
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(d.Object.Object, into, true); err != nil {
		// The converter names the Go type, not the field ("unrecognized type: int32"); the
		// schema names the field, as the apiserver would.
		if errs := in.Schemas.Validate(context.Background(), d.Object.GroupVersionKind(), d.Object.Object); len(errs) > 0 {
			return inputErrorf("%s: %v", d.Where(), errs.ToAggregate())
		}
		return inputErrorf("%s: %v", d.Where(), err)
	}
	into.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(d.Object.GetAPIVersion(), d.Object.GetKind()))
	return nil
}
