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

package webhook

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/internal/crdschema"
)

// TestOptimizationDocsExampleIsAdmitted keeps docs/optimization.md's example true: it decodes
// strictly into the Go type, the CRD schema (defaults, CEL) admits it, and so does the webhook.
func TestOptimizationDocsExampleIsAdmitted(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "docs", "optimization.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "```yaml\n")
	if !ok {
		t.Fatal("no yaml block in docs/optimization.md")
	}
	doc, _, _ := strings.Cut(rest, "```")
	oj := &trainer.OptimizationJob{}
	if err := yaml.UnmarshalStrict([]byte(doc), oj); err != nil {
		t.Fatal(err)
	}
	schemas, err := crdschema.Load(crd.Bases)
	if err != nil {
		t.Fatal(err)
	}
	oj.Namespace = "ns"
	// From the typed object, so numbers are integers as the apiserver decodes them.
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(oj)
	if err != nil {
		t.Fatal(err)
	}
	gvk := trainer.GroupVersion.WithKind(trainer.OptimizationJobKind)
	if _, err := schemas.Default(gvk, obj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string(nil), errorStrings(schemas.Validate(t.Context(), gvk, obj))); diff != "" {
		t.Errorf("schema errors (-want,+got):\n%s", diff)
	}
	warnings, errs := ValidateOptimizationJob(oj)
	if diff := cmp.Diff([]string(nil), errorStrings(errs)); diff != "" {
		t.Errorf("webhook errors (-want,+got):\n%s", diff)
	}
	if len(warnings) > 0 {
		t.Errorf("warnings: %v", warnings)
	}
}
