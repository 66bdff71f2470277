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

package crdschema

import (
	"reflect"

	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// linearValidator is the apiserver's OpenAPI validation of a custom resource on create, in time
// linear in the object. kube-openapi merges every child's errors into its parent's, comparing
// each with all those already there: quadratic in the errors, hours for a 3 MiB list of wrong
// items. Here each property and item validator hands its errors to one collector instead (the
// apiserver's ratcheting validator hooks in the same way), which stops after limit of them.
type linearValidator struct {
	schema *spec.Schema
	limit  int
	// truncated is set when the validation stopped at limit errors.
	truncated *bool
}

var _ apiservervalidation.SchemaCreateValidator = linearValidator{}

// Validate validates obj; the errors carry the same paths and messages as the apiserver's.
func (v linearValidator) Validate(obj any, _ ...apiservervalidation.ValidationOption) *validate.Result {
	c := &collector{limit: v.limit, seen: map[string]bool{}}
	root := validate.NewSchemaValidator(v.schema, nil, "", strfmt.Default, c.option())
	c.keep(root.Validate(obj))
	*v.truncated = c.truncated
	return &validate.Result{Errors: c.errs}
}

// collector gathers the errors of every validator it creates.
type collector struct {
	limit     int
	errs      []error
	seen      map[string]bool
	truncated bool
}

func (c *collector) option() validate.Option {
	return func(o *validate.SchemaValidatorOptions) {
		o.NewValidatorForField = func(_ string, s *spec.Schema, root any, path string, f strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			return c.child(s, root, path, f)
		}
		o.NewValidatorForIndex = func(_ int, s *spec.Schema, root any, path string, f strfmt.Registry, _ ...validate.Option) validate.ValueValidator {
			return c.child(s, root, path, f)
		}
	}
}

func (c *collector) child(s *spec.Schema, root any, path string, f strfmt.Registry) validate.ValueValidator {
	return &collecting{c: c, schema: s, root: root, path: path, formats: f}
}

// keep adds r's errors, each once (as Result.AddErrors does), up to the limit.
func (c *collector) keep(r *validate.Result) {
	for _, err := range r.Errors {
		msg := err.Error()
		if c.seen[msg] {
			continue
		}
		if len(c.errs) == c.limit {
			c.truncated = true
			return
		}
		c.seen[msg] = true
		c.errs = append(c.errs, err)
	}
}

// collecting validates a property or item, hands its errors to the collector and returns none
// to its parent, which would otherwise compare them with all of its own. Its validator is only
// built when there is something left to report.
type collecting struct {
	c       *collector
	schema  *spec.Schema
	root    any
	path    string
	formats strfmt.Registry
}

func (v *collecting) SetPath(path string) { v.path = path }

func (v *collecting) Applies(source any, _ reflect.Kind) bool {
	_, ok := source.(*spec.Schema)
	return ok
}

func (v *collecting) Validate(data any) *validate.Result {
	if v.c.truncated {
		// Past the limit nothing more is reported, so nothing more is checked.
		return &validate.Result{}
	}
	s := v.schema
	if list, ok := data.([]any); ok && s.MaxItems != nil && int64(len(list)) > *s.MaxItems && s.Items != nil {
		// Too long: refused whatever its items, which are not checked (the apiserver checks
		// them too, and reports their errors after this one).
		short := *s
		short.Items = nil
		s = &short
	}
	r := validate.NewSchemaValidator(s, v.root, v.path, v.formats, v.c.option()).Validate(data)
	v.c.keep(r)
	return &validate.Result{MatchCount: r.MatchCount}
}
