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

// Package crdschema applies a CRD's structural schema to objects outside an apiserver: unknown
// fields, defaults, OpenAPI validation and CEL rules, with the apiserver's own code.
package crdschema

import (
	"context"
	"fmt"
	"io/fs"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"sigs.k8s.io/yaml"
)

// Schemas holds the structural schema of every served version of a set of CRDs.
type Schemas struct {
	kinds map[schema.GroupVersionKind]*kindSchema
}

type kindSchema struct {
	namespaced bool
	structural *structuralschema.Structural
	openapi    *spec.Schema
	cel        *cel.Validator
}

// Load reads every *.yaml CRD of fsys.
func Load(fsys fs.FS) (*Schemas, error) {
	files, err := fs.Glob(fsys, "*/*.yaml")
	if err != nil {
		return nil, err
	}
	s := &Schemas{kinds: map[schema.GroupVersionKind]*kindSchema{}}
	for _, f := range files {
		data, err := fs.ReadFile(fsys, f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(data, crd); err != nil {
			return nil, fmt.Errorf("decoding CRD %s: %w", f, err)
		}
		for _, v := range crd.Spec.Versions {
			ks, err := newKindSchema(v.Schema.OpenAPIV3Schema)
			if err != nil {
				return nil, fmt.Errorf("CRD %s version %s: %w", crd.Name, v.Name, err)
			}
			ks.namespaced = crd.Spec.Scope == apiextensionsv1.NamespaceScoped
			s.kinds[schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.Kind}] = ks
		}
	}
	return s, nil
}

func newKindSchema(v1 *apiextensionsv1.JSONSchemaProps) (*kindSchema, error) {
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v1, internal, nil); err != nil {
		return nil, err
	}
	structural, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, err
	}
	_, openapi, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	return &kindSchema{
		structural: structural,
		openapi:    openapi,
		cel:        cel.NewValidator(structural, true, celconfig.PerCallLimit),
	}, nil
}

// Has reports whether gvk is one of the loaded kinds.
func (s *Schemas) Has(gvk schema.GroupVersionKind) bool {
	_, ok := s.kinds[gvk]
	return ok
}

// Default fills in the schema defaults of obj, a decoded object of kind gvk, as the apiserver
// does on create. It returns the paths of fields the schema does not know; the apiserver would
// drop them.
func (s *Schemas) Default(gvk schema.GroupVersionKind, obj map[string]any) ([]string, error) {
	ks, ok := s.kinds[gvk]
	if !ok {
		return nil, fmt.Errorf("no schema for %s", gvk)
	}
	unknown := pruning.PruneWithOptions(obj, ks.structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	// As the apiserver decodes: a null where the schema allows none is dropped, not refused.
	defaulting.PruneNonNullableNullsWithoutDefaults(obj, ks.structural)
	defaulting.Default(obj, ks.structural)
	return unknown, nil
}

// MaxErrors is the most errors Validate reports: past them it stops checking, which bounds its
// time and memory whatever the object.
const MaxErrors = 100

// Validate checks obj against the OpenAPI schema and the CEL rules of its kind, as on create. When
// it stops at MaxErrors, the last error says so: a TooMany error on no field.
func (s *Schemas) Validate(ctx context.Context, gvk schema.GroupVersionKind, obj map[string]any) field.ErrorList {
	ks, ok := s.kinds[gvk]
	if !ok {
		return field.ErrorList{field.InternalError(nil, fmt.Errorf("no schema for %s", gvk))}
	}
	// The apiserver's checks of a custom resource on create, in its order: metadata, the OpenAPI
	// schema, embedded objects' metadata, list-map and list-set uniqueness, then the CEL rules.
	u := &unstructured.Unstructured{Object: obj}
	errs := apivalidation.ValidateObjectMetaAccessor(u, ks.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	var truncated bool
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj, linearValidator{schema: ks.openapi, limit: MaxErrors, truncated: &truncated})...)
	errs = append(errs, objectmeta.Validate(nil, obj, ks.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, ks.structural, obj)...)
	celErrs, _ := ks.cel.Validate(ctx, nil, ks.structural, obj, nil, celconfig.RuntimeCELCostBudget)
	errs = append(errs, celErrs...)
	if truncated || len(errs) > MaxErrors {
		errs = append(errs[:min(len(errs), MaxErrors)], &field.Error{Type: field.ErrorTypeTooMany, BadValue: field.OmitValueType{},
			Detail: fmt.Sprintf("the checks stopped after %d errors", MaxErrors)})
	}
	return errs
}
