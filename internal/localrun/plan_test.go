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

package localrun

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/render"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// renderFile renders a TrainJob file as gantry render does, its runtime from the shipped ones.
func renderFile(t *testing.T, path string) []*unstructured.Unstructured {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	in, err := render.ReadFinding([]render.Source{{Name: path, Data: f}}, "", render.ShippedRuntime)
	if err != nil {
		t.Fatal(err)
	}
	in.StatusServerCA = "LOCAL CA\n"
	rt, err := render.NewRuntimeWithStatus(true)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := render.Objects(context.Background(), rt, in)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func testOptions() Options {
	next := int32(40000)
	return Options{
		Workdir:     "/WORKDIR",
		FreePort:    func() (int32, error) { next++; return next, nil },
		StatusURL:   "https://127.0.0.1:39999/apis/status",
		StatusToken: "TOKEN",
		// No torch here: the plans are this machine's whatever torch it has.
		TorchProbe: func(string) (TorchVersions, error) { return TorchVersions{}, errors.New("no torch in unit tests") },
		LookupEnv:  func(string) (string, bool) { return "", false },
	}
}

// TestPlanGolden checks the plans of the torch, MPI, JAX and torchtune runtimes against golden
// files (-update rewrites them), and that every step's env is the render's but for the listed
// rewrites and the values the downward API gives.
func TestPlanGolden(t *testing.T) {
	cases := map[string]string{
		"torch":     "testdata/torch.yaml",
		"mpi":       "../../examples/06-deepspeed-mpi.yaml",
		"jax":       "testdata/jax.yaml",
		"torchtune": "testdata/torchtune.yaml",
	}
	for name, path := range cases {
		t.Run(name, func(t *testing.T) {
			objs := renderFile(t, path)
			plan, err := NewPlan(objs, testOptions())
			if err != nil {
				t.Fatal(err)
			}
			var text bytes.Buffer
			if err := plan.Print(&text); err != nil {
				t.Fatal(err)
			}
			js, err := json.MarshalIndent(plan, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden(t, filepath.Join("testdata", name+".plan.txt"), text.Bytes())
			golden(t, filepath.Join("testdata", name+".plan.json"), append(js, '\n'))
			checkEnvIsRendered(t, objs, plan)
		})
	}
}

func golden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/localrun -update)", err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s (-want,+got):\n%s", path, diff)
	}
}

// checkEnvIsRendered compares each step's env with its container's env in the rendered JobSet:
// a literal value is kept unless a rewrite lists it; a valueFrom is resolved.
func checkEnvIsRendered(t *testing.T, objs []*unstructured.Unstructured, plan *Plan) {
	t.Helper()
	var js jobset.JobSet
	for _, o := range objs {
		if o.GetKind() == "JobSet" {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &js); err != nil {
				t.Fatal(err)
			}
		}
	}
	containers := map[string]corev1.Container{}
	for _, rj := range js.Spec.ReplicatedJobs {
		containers[rj.Name] = rj.Template.Spec.Template.Spec.Containers[0]
	}
	for _, s := range plan.Steps {
		c := containers[s.ReplicatedJob]
		rewritten := map[string]Rewrite{}
		for _, r := range s.Rewrites {
			rewritten[r.Where] = r
		}
		got := map[string]string{}
		for _, e := range s.Env {
			got[e.Name] = e.Value
		}
		for _, e := range c.Env {
			v, ok := got[e.Name]
			if !ok {
				t.Errorf("step %s: env %s of the render is missing", s.Name, e.Name)
				continue
			}
			if e.ValueFrom != nil {
				continue
			}
			want := expand(e.Value, s.Env)
			if r, ok := rewritten["env "+e.Name]; ok {
				if r.From != want || r.To != v {
					t.Errorf("step %s: env %s is %q, its rewrite says %q -> %q", s.Name, e.Name, v, r.From, r.To)
				}
				continue
			}
			if v != want {
				t.Errorf("step %s: env %s is %q, the render says %q, and no rewrite is listed", s.Name, e.Name, v, want)
			}
		}
	}
}
