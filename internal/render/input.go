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
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apimachinery/pkg/util/validation/field"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/internal/crdschema"
	"github.com/gantry-ml/gantry/internal/manifest"
)

// DefaultNamespace is used for objects that name none, as kubectl would.
const DefaultNamespace = "default"

// Read's limits on its input, which bound gantry render's time and memory. A TrainJob and its
// runtime are kilobytes and hold a few hundred values; each value costs up to about 13 KiB to
// check, build and print, and each input byte about 150 bytes to parse.
const (
	// MaxInputBytes bounds all the sources together: the runtime's snapshot must fit a
	// ConfigMap, which holds at most 1 MiB, and YAML aliases may not expand a document past it.
	MaxInputBytes = 1 << 20
	// MaxDocuments bounds the documents of all the sources, empty ones aside.
	MaxDocuments = 1000
	// MaxValues bounds the values (mappings, lists and scalars) of one document.
	MaxValues = 20_000
)

var errInputTooLarge = fmt.Errorf("the input is over %d MiB, the most gantry render reads", MaxInputBytes>>20)

// budgetReader fails once the sources sharing its budget have given more than MaxInputBytes, so
// an endless standard input cannot fill the memory.
type budgetReader struct {
	r    io.Reader
	left *int
}

func (b budgetReader) Read(p []byte) (int, error) {
	if *b.left < 0 {
		return 0, errInputTooLarge
	}
	n, err := b.r.Read(p[:min(len(p), *b.left+1)])
	if *b.left -= n; *b.left < 0 {
		return n, errInputTooLarge
	}
	return n, err
}

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
	// StatusServerCA goes into the namespace's CA ConfigMap (gantry-status-server-ca); Read sets PlaceholderCA.
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
	return read(sources, schemas, DefaultNamespace)
}

// RuntimeFinder returns the YAML of a runtime the sources lack (kind, the namespace of a
// TrainingRuntime, name), or nil when it has none; its error is ReadFinding's.
type RuntimeFinder func(kind, namespace, name string) (*Source, error)

// ReadFinding is Read where the TrainJob's runtime, when the sources lack it, comes from find
// (gantry run --local takes it from the cluster or the shipped runtimes), and objects without a
// namespace get namespace (the kubeconfig's, or -n), "" meaning DefaultNamespace.
func ReadFinding(sources []Source, namespace string, find RuntimeFinder) (*Input, error) {
	schemas, err := crdschema.Load(crd.Bases)
	if err != nil {
		return nil, fmt.Errorf("loading the embedded CRDs: %w", err)
	}
	// Both reads need the sources: keep their bytes (up to the budget, which read enforces).
	data := make([][]byte, len(sources))
	for i, src := range sources {
		if data[i], err = io.ReadAll(io.LimitReader(src.Data, MaxInputBytes+1)); err != nil {
			return nil, inputErrorf("%s: %v", src.Name, err)
		}
	}
	again := func() []Source {
		out := make([]Source, len(sources))
		for i, src := range sources {
			out[i] = Source{Name: src.Name, Data: bytes.NewReader(data[i])}
		}
		return out
	}
	in, err := read(again(), schemas, cmp.Or(namespace, DefaultNamespace))
	var missing *missingRuntimeError
	if find == nil || !errors.As(err, &missing) {
		return in, err
	}
	src, ferr := find(missing.kind, missing.namespace, missing.name)
	if ferr != nil {
		return nil, ferr
	}
	if src == nil {
		return nil, err
	}
	return read(append(again(), *src), schemas, cmp.Or(namespace, DefaultNamespace))
}

// missingRuntimeError is an input without the runtime its TrainJob references.
type missingRuntimeError struct {
	InputError
	kind, namespace, name string
}

// Unwrap makes the error an InputError for IsInputError.
func (e *missingRuntimeError) Unwrap() error { return &e.InputError }

func read(sources []Source, schemas *crdschema.Schemas, namespace string) (*Input, error) {
	in := &Input{Schemas: schemas, StatusServerCA: PlaceholderCA}
	var docs []*Document
	budget, docsLeft := MaxInputBytes, MaxDocuments
	for _, src := range sources {
		src.Data = budgetReader{r: src.Data, left: &budget}
		d, err := decodeAll(src, schemas, &docsLeft, namespace)
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
	if ref.Kind == nil || ref.APIGroup == nil || ref.Name == "" {
		// The schema defaults kind and apiGroup only inside a runtimeRef.
		return inputErrorf("%s: spec.runtimeRef: Required value: name the runtime the TrainJob runs on", in.TrainJobDocument.Where())
	}
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
	where, namespace := "", ""
	if kind == trainer.TrainingRuntimeKind {
		where, namespace = fmt.Sprintf(" in namespace %q", in.TrainJob.Namespace), in.TrainJob.Namespace
	}
	return &missingRuntimeError{
		InputError: InputError{msg: fmt.Sprintf("%s: spec.runtimeRef: %s %q%s is not in the input: add its file with -f",
			in.TrainJobDocument.Where(), kind, ref.Name, where)},
		kind: kind, namespace: namespace, name: ref.Name,
	}
}

// decodeAll decodes the documents of src; left counts down the documents the input may still have.
func decodeAll(src Source, schemas *crdschema.Schemas, left *int, namespace string) ([]*Document, error) {
	reader := utilyaml.NewYAMLReader(bufio.NewReader(src.Data))
	var docs []*Document
	for i := 0; ; i++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if errors.Is(err, errInputTooLarge) {
			return nil, inputErrorf("%s: %v", src.Name, err)
		}
		if err != nil {
			return nil, inputErrorf("%s: reading document %d: %v", src.Name, i+1, err)
		}
		if blank(raw) {
			i--
			continue
		}
		if *left--; *left < 0 {
			return nil, inputErrorf("%s: the input has over %d documents, the most gantry render reads", src.Name, MaxDocuments)
		}
		obj, err := decodeObject(raw)
		if err != nil {
			return nil, inputErrorf("%s: document %d%v", src.Name, i+1, err)
		}
		if len(obj) == 0 {
			i--
			continue
		}
		d := &Document{Source: src.Name, Index: i, Object: &unstructured.Unstructured{Object: obj}}
		if err := prepare(d, schemas, namespace); err != nil {
			return nil, err
		}
		docs = append(docs, d)
	}
}

// blank reports whether doc holds only blank lines and comments, without parsing it.
func blank(doc []byte) bool {
	for line := range bytes.Lines(doc) {
		if line = bytes.TrimSpace(line); len(line) > 0 && line[0] != '#' {
			return false
		}
	}
	return true
}

// decodeObject decodes one document; its errors follow "document N".
func decodeObject(raw []byte) (map[string]any, error) {
	if err := manifest.CheckDocument(raw, MaxInputBytes); err != nil {
		return nil, fmt.Errorf(": %w", err)
	}
	// Strict: a key given twice is refused, as the apiserver's strict decoding does, instead of
	// the last one silently winning. Numbers stay int64 where they are integers.
	var v any
	if err := utilyaml.UnmarshalStrict(raw, &v); err != nil {
		return nil, fmt.Errorf(": malformed YAML: %s", strings.Join(strings.Fields(err.Error()), " "))
	}
	if countValues(v, MaxValues) > MaxValues {
		return nil, fmt.Errorf(" holds over %d values (mappings, lists and scalars), the most gantry render reads of one object", MaxValues)
	}
	switch v := v.(type) {
	case nil:
		return nil, nil
	case map[string]any:
		return v, nil
	case []any:
		return nil, errors.New(" is a list, not an object: want a mapping with apiVersion, kind and metadata")
	default:
		return nil, fmt.Errorf(" is a %s, not an object: want a mapping with apiVersion, kind and metadata", jsonType(v))
	}
}

// countValues counts v's values, stopping past max.
func countValues(v any, max int) int {
	n := 1
	switch v := v.(type) {
	case map[string]any:
		for _, item := range v {
			if n += countValues(item, max-n); n > max {
				return n
			}
		}
	case []any:
		for _, item := range v {
			if n += countValues(item, max-n); n > max {
				return n
			}
		}
	}
	return n
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	default:
		return "number"
	}
}

// prepare checks the kind, sets the default namespace and applies the schema defaults.
func prepare(d *Document, schemas *crdschema.Schemas, namespace string) error {
	gvk := d.Object.GroupVersionKind()
	if gvk.Kind == "" {
		return inputErrorf("%s: document %d has no kind: want TrainJob, TrainingRuntime or ClusterTrainingRuntime of %s", d.Source, d.Index+1, trainer.GroupVersion)
	}
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
		d.Object.SetNamespace(namespace)
	}
	unknown, err := schemas.Default(gvk, d.Object.Object)
	if err != nil {
		return err
	}
	if len(unknown) > 0 {
		return inputErrorf("%s: unknown field %s", d.Where(), quoteSome(unknown, maxListed))
	}
	return nil
}

// maxListed is the most unknown fields an error names.
const maxListed = 10

// quoteSome quotes the first max names and counts the others.
func quoteSome(names []string, max int) string {
	shown := make([]string, 0, min(len(names), max))
	for _, n := range names[:min(len(names), max)] {
		shown = append(shown, fmt.Sprintf("%q", n))
	}
	s := strings.Join(shown, ", ")
	if len(names) > max {
		s += fmt.Sprintf(" and %d more", len(names)-max)
	}
	return s
}

func (in *Input) toTyped(d *Document, into runtime.Object) error {
	// Through JSON, as the controller reads objects: a number out of its field's range is refused
	// (the unstructured converter would wrap 4294967297 to an int32 1).
	data, err := json.Marshal(d.Object.Object)
	if err == nil {
		err = utiljson.Unmarshal(data, into)
	}
	if err != nil {
		// The decoder names the Go type, not the field ("cannot unmarshal number into int32");
		// the schema names the field, as the apiserver would.
		if errs := in.Schemas.Validate(context.Background(), d.Object.GroupVersionKind(), d.Object.Object); len(errs) > 0 {
			return inputErrorf("%s: %s", d.Where(), joinErrors(errs))
		}
		return inputErrorf("%s: %v", d.Where(), err)
	}
	into.GetObjectKind().SetGroupVersionKind(schema.FromAPIVersionAndKind(d.Object.GetAPIVersion(), d.Object.GetKind()))
	return nil
}

// joinErrors writes the errors on one line. An error on the whole object (the name format, the
// cut-off of crdschema.Validate) has no field: its message names what it is about.
func joinErrors(errs field.ErrorList) string {
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteString("; ")
		}
		b.WriteString(FormatError(e))
	}
	return b.String()
}

// FormatError is the error's message, without a field when it has none.
func FormatError(e *field.Error) string {
	if e.Field == "" || e.Field == "<nil>" {
		return e.ErrorBody()
	}
	return e.Error()
}
