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

package differential

import (
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"

	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/test/util"
)

// upstreamSince are the rules Kubeflow Trainer added to its CRDs after v2.3.0, which Gantry's
// carry too: numNodes may be 0, and numProcPerNode (the trainer's and MPI's) is at least 1.
var upstreamSince = map[string]func(schema map[string]any){
	"trainjobs.trainer.kubeflow.org": func(s map[string]any) {
		setAt(s, "spec.trainer.numNodes", "minimum", int64(0))
		addRule(s, "spec.trainer.numProcPerNode", "self >= 1", "numProcPerNode must be greater than or equal to 1")
	},
	"trainingruntimes.trainer.kubeflow.org":        mpiNumProcPerNode,
	"clustertrainingruntimes.trainer.kubeflow.org": mpiNumProcPerNode,
}

func mpiNumProcPerNode(s map[string]any) {
	addRule(s, "spec.mlPolicy.mpi.numProcPerNode", "self >= 1", "NumProcPerNode in mpiPolicy must be >= 1")
}

// additive are the only properties Gantry's schemas have that the reference's lack, by CRD and
// schema path. Each is a status field: the compatibility contract allows new status fields (the
// Python SDK's models and Kueue's Go types ignore unknown ones), where a new condition type would
// make the SDK report a running TrainJob as "Created". docs/compatibility.md lists them as the
// only schema difference. Every other difference fails the test, and so does an entry here that
// no longer matches.
var additive = map[string][]string{
	"trainjobs.trainer.kubeflow.org": {
		// Why the controller could not create or update the TrainJob's objects (a missing runtime,
		// a refused write), cleared by the next successful build: Kubeflow Trainer only logs it.
		"properties.status.properties.buildError",
		// The optional features (progress reporting, gang scheduling) a TrainJob runs without,
		// and why, so that a job that runs without them says so.
		"properties.status.properties.disabledFeatures",
	},
}

// TestCRDSchemasMatchTheReference holds Gantry's three CRDs to Kubeflow Trainer v2.3.0's,
// read from its module, plus the rules upstream added since (upstreamSince): path by path,
// every type, default, enum, bound, required list, list semantics, CEL rule and message
// (descriptions may differ), the additive status fields above aside. The schema is part of the
// wire: platform teams diff CRDs when they switch controllers, MultiKueue workers may run the
// reference, and the Python SDK's models are generated from it. Gantry's stricter checks live in
// its validating webhook instead.
func TestCRDSchemasMatchTheReference(t *testing.T) {
	ref, ours := referenceCRDs(t), readCRDs(t, crd.Bases, "bases")
	for name, want := range ref {
		t.Run(name, func(t *testing.T) {
			got, ok := ours[name]
			if !ok {
				t.Fatalf("Gantry has no CRD %s", name)
			}
			if diffs := crdDifferences(t, name, want, got); len(diffs) > 0 {
				t.Errorf("%d differences from Kubeflow Trainer v2.3.0's schema:\n  %s", len(diffs), strings.Join(diffs, "\n  "))
			}
		})
	}
}

// TestCRDDifferencesAreFound shows the comparison failing: a copy of the reference's TrainJob CRD
// with the allow-listed status fields added compares equal, and each further change is reported.
func TestCRDDifferencesAreFound(t *testing.T) {
	const name = "trainjobs.trainer.kubeflow.org"
	status := "properties.status"
	jobs := status + ".properties.jobsStatus.items"
	cases := map[string]struct {
		change func(s map[string]any)
		want   []string
	}{
		"the allow-listed status fields only": {change: func(map[string]any) {}},
		"an allow-listed field gone": {
			change: func(s map[string]any) { delete(at(s, "status")["properties"].(map[string]any), "buildError") },
			want:   []string{status + ".properties.buildError: allow-listed as Gantry's alone, but it is not"},
		},
		"another status field": {
			change: func(s map[string]any) {
				at(s, "status")["properties"].(map[string]any)["restarts"] = map[string]any{"type": "integer"}
			},
			want: []string{status + ".properties.restarts: only Gantry's has it (map[type:integer])"},
		},
		"an allow-listed name elsewhere": {
			change: func(s map[string]any) {
				at(s, "spec")["properties"].(map[string]any)["buildError"] = map[string]any{"type": "object"}
			},
			want: []string{"properties.spec.properties.buildError: only Gantry's has it (map[type:object])"},
		},
		"a required list": {
			change: func(s map[string]any) {
				at(s, "status.jobsStatus")["items"].(map[string]any)["required"] = []any{"name"}
			},
			want: []string{jobs + ".required: reference [active failed name ready succeeded suspended], Gantry [name]"},
		},
		"a bound": {
			change: func(s map[string]any) {
				at(s, "status.jobsStatus")["items"].(map[string]any)["properties"].(map[string]any)["name"].(map[string]any)["maxLength"] = int64(63)
			},
			want: []string{jobs + ".properties.name.maxLength: reference 253, Gantry 63"},
		},
		"a required field of the object": {
			change: func(s map[string]any) { s["required"] = []any{"spec"} },
			want:   []string{"required: only Gantry's has it ([spec])"},
		},
		"a CEL rule added": {
			change: func(s map[string]any) { addRule(s, "spec.suspend", "self == oldSelf", "field is immutable") },
			want: []string{"properties.spec.properties.suspend.x-kubernetes-validations: only Gantry's has it " +
				"([map[message:field is immutable rule:self == oldSelf]])"},
		},
		"a default": {
			change: func(s map[string]any) { setAt(s, "spec.suspend", "default", true) },
			want:   []string{"properties.spec.properties.suspend.default: reference false, Gantry true"},
		},
	}
	want := referenceCRDs(t)[name]
	for caseName, tc := range cases {
		t.Run(caseName, func(t *testing.T) {
			got := want.DeepCopy()
			schema := schemaOf(t, got)
			upstreamSince[name](schema)
			props := at(schema, "status")["properties"].(map[string]any)
			props["buildError"] = map[string]any{"type": "object"}
			props["disabledFeatures"] = map[string]any{"type": "array"}
			tc.change(schema)
			setSchema(t, got, schema)
			if diff := cmp.Diff(tc.want, crdDifferences(t, name, want, got)); diff != "" {
				t.Errorf("differences (-want,+got):\n%s", diff)
			}
		})
	}
}

// crdDifferences lists, sorted, how got's served schema, scope and subresources differ from
// want's (with upstreamSince applied), the allow-listed additive properties aside.
func crdDifferences(t *testing.T, name string, want, got *apiextensionsv1.CustomResourceDefinition) []string {
	t.Helper()
	wantSchema, gotSchema := schemaOf(t, want), schemaOf(t, got)
	if patch := upstreamSince[name]; patch != nil {
		patch(wantSchema)
	}
	c := comparison{allowed: map[string]bool{}}
	for _, p := range additive[name] {
		c.allowed[p] = true
	}
	c.compare("", wantSchema, gotSchema)
	for _, p := range additive[name] {
		if !c.seen[p] {
			c.diffs = append(c.diffs, fmt.Sprintf("%s: allow-listed as Gantry's alone, but it is not", p))
		}
	}
	if got.Spec.Scope != want.Spec.Scope {
		c.diffs = append(c.diffs, fmt.Sprintf("scope: reference %s, Gantry %s", want.Spec.Scope, got.Spec.Scope))
	}
	if fmt.Sprint(got.Spec.Versions[0].Subresources) != fmt.Sprint(want.Spec.Versions[0].Subresources) {
		c.diffs = append(c.diffs, "subresources differ")
	}
	sort.Strings(c.diffs)
	return c.diffs
}

func referenceCRDs(t *testing.T) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	_, file, _, _ := goruntime.Caller(0)
	dir, err := util.ModuleDirIn(filepath.Dir(file), referenceModule)
	if err != nil {
		t.Fatal(err)
	}
	return readCRDs(t, os.DirFS(filepath.Join(dir, "manifests", "base", "crds")), ".")
}

const optimizationJobsCRD = "optimizationjobs.trainer.kubeflow.org"

func readCRDs(t *testing.T, fsys fs.FS, dir string) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".yaml") {
			continue
		}
		raw, err := fs.ReadFile(fsys, filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		c := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.Unmarshal(raw, c); err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		// OptimizationJob is not in v2.3.0: api/trainer/v1alpha1's schema test holds it to
		// Kubeflow Trainer main's.
		if c.Kind == "CustomResourceDefinition" && strings.HasSuffix(c.Name, ".trainer.kubeflow.org") && c.Name != optimizationJobsCRD {
			out[c.Name] = c
		}
	}
	if len(out) != 3 {
		t.Fatalf("%s holds %d trainer.kubeflow.org CRDs, want 3", dir, len(out))
	}
	return out
}

// schemaOf is the served version's schema as plain data, descriptions removed.
func schemaOf(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) map[string]any {
	t.Helper()
	if len(c.Spec.Versions) != 1 || c.Spec.Versions[0].Name != "v1alpha1" {
		t.Fatalf("%s: want the one version v1alpha1", c.Name)
	}
	raw, err := yaml.Marshal(c.Spec.Versions[0].Schema.OpenAPIV3Schema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := yaml.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	stripDescriptions(m)
	return m
}

func stripDescriptions(v any) {
	switch x := v.(type) {
	case map[string]any:
		delete(x, "description")
		for _, c := range x {
			stripDescriptions(c)
		}
	case []any:
		for _, c := range x {
			stripDescriptions(c)
		}
	}
}

// comparison lists, by schema path, every keyword whose value differs; a property only Gantry's
// schema has is reported unless its path is allowed.
type comparison struct {
	allowed map[string]bool
	// seen are the allowed paths found in Gantry's schema alone.
	seen  map[string]bool
	diffs []string
}

func (c *comparison) compare(path string, want, got any) {
	wm, wok := want.(map[string]any)
	gm, gok := got.(map[string]any)
	if !wok || !gok {
		if fmt.Sprint(want) != fmt.Sprint(got) {
			c.diffs = append(c.diffs, fmt.Sprintf("%s: reference %v, Gantry %v", path, want, got))
		}
		return
	}
	keys := slices.Sorted(maps.Keys(wm))
	for k := range gm {
		if _, ok := wm[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := k
		if path != "" {
			p = path + "." + k
		}
		w, inW := wm[k]
		g, inG := gm[k]
		switch {
		case !inW && c.allowed[p]:
			if c.seen == nil {
				c.seen = map[string]bool{}
			}
			c.seen[p] = true
		case !inW:
			c.diffs = append(c.diffs, fmt.Sprintf("%s: only Gantry's has it (%v)", p, g))
		case !inG:
			c.diffs = append(c.diffs, fmt.Sprintf("%s: only the reference's has it (%v)", p, w))
		default:
			c.compare(p, w, g)
		}
	}
}

// at is the schema of a field path ("spec.trainer.numNodes").
func at(schema map[string]any, path string) map[string]any {
	cur := schema
	for f := range strings.SplitSeq(path, ".") {
		props, _ := cur["properties"].(map[string]any)
		next, _ := props[f].(map[string]any)
		if next == nil {
			panic("no field " + path)
		}
		cur = next
	}
	return cur
}

func setAt(schema map[string]any, path, key string, value any) { at(schema, path)[key] = value }

// setSchema replaces the served version's schema of c with schema.
func setSchema(t *testing.T, c *apiextensionsv1.CustomResourceDefinition, schema map[string]any) {
	t.Helper()
	raw, err := yaml.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	props := &apiextensionsv1.JSONSchemaProps{}
	if err := yaml.Unmarshal(raw, props); err != nil {
		t.Fatal(err)
	}
	c.Spec.Versions[0].Schema.OpenAPIV3Schema = props
}

func addRule(schema map[string]any, path, rule, message string) {
	s := at(schema, path)
	rules, _ := s["x-kubernetes-validations"].([]any)
	s["x-kubernetes-validations"] = append(rules, map[string]any{"rule": rule, "message": message})
}
