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

package v1alpha1

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// schemaRow is one row of the upstream table: the facts of one schema path.
type schemaRow struct {
	Type, Required, Default, List string
	Bounds                        []string
	Rules                         [][2]string
}

// templateSpec is the path whose subtree is the TrainJob's own spec: the table stops there and
// the test compares it with the TrainJob CRD's spec instead.
const templateSpec = "OptimizationJob.spec.trainJobTemplate.spec"

// TestOptimizationJobCRDMatchesUpstream holds the generated OptimizationJob CRD to Kubeflow
// Trainer main's, as testdata/optimizationjob_schema.md states it path by path: types, required
// children, defaults, bounds, enums, patterns, list semantics and CEL rules with their messages
// (descriptions may differ). The template's spec must be the TrainJob CRD's spec exactly.
func TestOptimizationJobCRDMatchesUpstream(t *testing.T) {
	want := readSchemaTable(t)
	crd := readCRD(t, "trainer.kubeflow.org_optimizationjobs.yaml")
	names := crd.Spec.Names
	v := crd.Spec.Versions[0]
	gotHeader := fmt.Sprintf("Kind `%s`, plural `%s`, scope %s, subresources %s, printer columns: %d.",
		names.Kind, names.Plural, crd.Spec.Scope, subresources(v.Subresources), len(v.AdditionalPrinterColumns))
	if diff := cmp.Diff(want.header, gotHeader); diff != "" {
		t.Errorf("names, scope and subresources (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(want.rows, schemaRows(v.Schema.OpenAPIV3Schema)); diff != "" {
		t.Errorf("schema (-upstream,+generated):\n%s", diff)
	}
	tj := readCRD(t, "trainer.kubeflow.org_trainjobs.yaml")
	wantSpec := stripped(t, tj.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"])
	gotSpec := stripped(t, v.Schema.OpenAPIV3Schema.Properties["spec"].Properties["trainJobTemplate"].Properties["spec"])
	if diff := cmp.Diff(wantSpec, gotSpec); diff != "" {
		t.Errorf("%s differs from the TrainJob CRD's spec (-TrainJob,+template):\n%s", templateSpec, diff)
	}
}

// TestSchemaRowsFindDifferences shows the comparison failing: each change to the generated schema
// is one differing row.
func TestSchemaRowsFindDifferences(t *testing.T) {
	cases := map[string]struct {
		change func(s *apiextensionsv1.JSONSchemaProps)
		want   []string
	}{
		"unchanged": {change: func(*apiextensionsv1.JSONSchemaProps) {}},
		"a bound": {
			change: func(s *apiextensionsv1.JSONSchemaProps) {
				editSpec(s, "numTrials", func(f *apiextensionsv1.JSONSchemaProps) { f.Maximum = ptrTo(99.0) })
			},
			want: []string{"OptimizationJob.spec.numTrials"},
		},
		"a rule message": {
			change: func(s *apiextensionsv1.JSONSchemaProps) {
				sp := s.Properties["spec"]
				sp.XValidations[1].Message = "parallelTrials must not exceed numTrials"
				s.Properties["spec"] = sp
			},
			want: []string{"OptimizationJob.spec"},
		},
		"a default": {
			change: func(s *apiextensionsv1.JSONSchemaProps) {
				editSpec(s, "searchAlgorithm", func(f *apiextensionsv1.JSONSchemaProps) {
					f.Default = &apiextensionsv1.JSON{Raw: []byte(`{"grid":{}}`)}
				})
			},
			want: []string{"OptimizationJob.spec.searchAlgorithm"},
		},
		"a field added": {
			change: func(s *apiextensionsv1.JSONSchemaProps) {
				sp := s.Properties["spec"]
				sp.Properties["maxFailedTrials"] = apiextensionsv1.JSONSchemaProps{Type: "integer"}
				s.Properties["spec"] = sp
			},
			want: []string{"OptimizationJob.spec.maxFailedTrials"},
		},
	}
	want := readSchemaTable(t).rows
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := readCRD(t, "trainer.kubeflow.org_optimizationjobs.yaml").Spec.Versions[0].Schema.OpenAPIV3Schema
			tc.change(s)
			got := schemaRows(s)
			var differ []string
			for _, p := range slices.Sorted(maps.Keys(got)) {
				if !cmp.Equal(want[p], got[p]) {
					differ = append(differ, p)
				}
			}
			for p := range want {
				if _, ok := got[p]; !ok {
					differ = append(differ, p)
				}
			}
			if diff := cmp.Diff(tc.want, differ); diff != "" {
				t.Errorf("differing paths (-want,+got):\n%s", diff)
			}
		})
	}
}

// editSpec changes the schema of one spec field; the schema maps hold values, so the edited
// copies are written back.
func editSpec(s *apiextensionsv1.JSONSchemaProps, field string, edit func(*apiextensionsv1.JSONSchemaProps)) {
	sp := s.Properties["spec"]
	f := sp.Properties[field]
	edit(&f)
	sp.Properties[field] = f
	s.Properties["spec"] = sp
}

func ptrTo[T any](v T) *T { return &v }

type schemaTable struct {
	header string
	rows   map[string]schemaRow
}

var celCell = regexp.MustCompile("`([^`]*)` → \"([^\"]*)\"")

// readSchemaTable parses testdata/optimizationjob_schema.md.
func readSchemaTable(t *testing.T) schemaTable {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", "optimizationjob_schema.md"))
	if err != nil {
		t.Fatal(err)
	}
	out := schemaTable{rows: map[string]schemaRow{}}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if strings.HasPrefix(line, "Kind `") {
			out.header = line
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := splitRow(line)
		if len(cells) != 7 {
			t.Fatalf("row with %d cells: %s", len(cells), line)
		}
		row := schemaRow{Type: cells[1], Required: cells[2], Default: normalDefault(t, cells[3]), List: cells[5]}
		if cells[4] != "" {
			row.Bounds = strings.Split(cells[4], "; ")
			slices.Sort(row.Bounds)
		}
		for _, m := range celCell.FindAllStringSubmatch(cells[6], -1) {
			row.Rules = append(row.Rules, [2]string{m[1], m[2]})
		}
		out.rows[strings.Trim(cells[0], "`")] = row
	}
	if out.header == "" || len(out.rows) == 0 {
		t.Fatal("no header or rows in the schema table")
	}
	return out
}

// splitRow splits a markdown table row on its unescaped pipes, unescaping the rest.
func splitRow(line string) []string {
	line = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(line), "|"), "|")
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(line); i++ {
		switch {
		case line[i] == '\\' && i+1 < len(line) && line[i+1] == '|':
			cur.WriteByte('|')
			i++
		case line[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(line[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// normalDefault is a default as canonical JSON: the table writes objects as Python literals
// ({'random': {}}) and strings bare.
func normalDefault(t *testing.T, cell string) string {
	cell = strings.Trim(cell, "`")
	t.Helper()
	if cell == "" {
		return ""
	}
	var v any
	if err := json.Unmarshal([]byte(strings.ReplaceAll(cell, "'", `"`)), &v); err != nil {
		v = cell
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// schemaRows renders a schema as the table's rows, from the root named OptimizationJob; the
// root's standard fields and everything below the template's spec are left out, as the table
// leaves them out.
func schemaRows(s *apiextensionsv1.JSONSchemaProps) map[string]schemaRow {
	out := map[string]schemaRow{}
	var walk func(path string, s *apiextensionsv1.JSONSchemaProps)
	walk = func(path string, s *apiextensionsv1.JSONSchemaProps) {
		out[path] = rowOf(s)
		if path == templateSpec {
			return
		}
		for name, p := range s.Properties {
			if path == "OptimizationJob" && (name == "apiVersion" || name == "kind" || name == "metadata") {
				continue
			}
			walk(path+"."+name, &p)
		}
		if s.Items != nil && s.Items.Schema != nil {
			walk(path+"[]", s.Items.Schema)
		}
	}
	walk("OptimizationJob", s)
	return out
}

func rowOf(s *apiextensionsv1.JSONSchemaProps) schemaRow {
	row := schemaRow{Type: s.Type, Required: strings.Join(slices.Sorted(slices.Values(s.Required)), ", ")}
	if s.Default != nil {
		var v any
		_ = json.Unmarshal(s.Default.Raw, &v)
		b, _ := json.Marshal(v)
		row.Default = string(b)
	}
	row.Bounds = bounds(s)
	if s.XListType != nil {
		row.List = "list-type=" + *s.XListType
		if len(s.XListMapKeys) > 0 {
			row.List += fmt.Sprintf(" list-map-keys=['%s']", strings.Join(s.XListMapKeys, "', '"))
		}
	}
	for _, r := range s.XValidations {
		row.Rules = append(row.Rules, [2]string{r.Rule, r.Message})
	}
	return row
}

func bounds(s *apiextensionsv1.JSONSchemaProps) []string {
	var b []string
	add := func(format string, v any) { b = append(b, fmt.Sprintf(format, v)) }
	if len(s.Enum) > 0 {
		var vals []string
		for _, e := range s.Enum {
			var v string
			_ = json.Unmarshal(e.Raw, &v)
			vals = append(vals, v)
		}
		add("enum %s", strings.Join(vals, "/"))
	}
	for _, n := range []struct {
		name string
		v    *float64
	}{{"minimum", s.Minimum}, {"maximum", s.Maximum}} {
		if n.v != nil {
			add(n.name+" %v", *n.v)
		}
	}
	for _, n := range []struct {
		name string
		v    *int64
	}{{"minLength", s.MinLength}, {"maxLength", s.MaxLength}, {"minItems", s.MinItems}, {"maxItems", s.MaxItems}} {
		if n.v != nil {
			add(n.name+" %d", *n.v)
		}
	}
	if s.Pattern != "" {
		add("pattern %s", s.Pattern)
	}
	if s.Format != "" {
		add("format %s", s.Format)
	}
	slices.Sort(b)
	return b
}

func subresources(s *apiextensionsv1.CustomResourceSubresources) string {
	var names []string
	if s != nil && s.Status != nil {
		names = append(names, "'status'")
	}
	if s != nil && s.Scale != nil {
		names = append(names, "'scale'")
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func readCRD(t *testing.T, file string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "config", "crd", "bases", file))
	if err != nil {
		t.Fatal(err)
	}
	c := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(raw, c); err != nil {
		t.Fatal(err)
	}
	if len(c.Spec.Versions) != 1 {
		t.Fatalf("%s: %d versions, want 1", file, len(c.Spec.Versions))
	}
	return c
}

// stripped is a schema as plain data without its descriptions.
func stripped(t *testing.T, s apiextensionsv1.JSONSchemaProps) any {
	t.Helper()
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(v any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "description")
			for _, c := range x {
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}
