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

package render

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-ml/gantry/internal/features"
)

var update = flag.Bool("update", false, "rewrite the golden files")

const (
	runtimes = "../../config/runtimes/"
	examples = "../../examples/"
	inputs   = "testdata/inputs/"
)

// goldenCases cross the shipped runtimes with representative TrainJobs. Each renders its inputs
// and compares with testdata/golden/<name>.yaml; "validate" cases compare the --validate output
// with testdata/golden/<name>.txt.
var goldenCases = map[string]struct {
	files    []string
	validate bool
	// statusOff renders with the TrainJobStatus gate off.
	statusOff bool
}{
	"torch-multi-node-gpu":       {files: []string{examples + "01-torch-multi-node.yaml", runtimes + "torch-distributed.yaml"}},
	"torch-trainjobstatus-off":   {files: []string{examples + "01-torch-multi-node.yaml", runtimes + "torch-distributed.yaml"}, statusOff: true},
	"torch-cpu":                  {files: []string{inputs + "torch-cpu.yaml", runtimes + "torch-distributed.yaml"}},
	"torch-no-resources":         {files: []string{inputs + "torch-no-resources.yaml", runtimes + "torch-distributed.yaml"}},
	"torch-env-injection":        {files: []string{inputs + "torch-env-injection.yaml"}},
	"torch-elastic":              {files: []string{inputs + "torch-elastic.yaml", runtimes + "torch-distributed.yaml"}},
	"torch-sdk-patches":          {files: []string{examples + "02-sdk-runtime-patches.yaml", runtimes + "torch-distributed.yaml"}},
	"torch-kueue-queued":         {files: []string{examples + "03-kueue-queued.yaml", runtimes + "torch-distributed.yaml"}},
	"patches-two-managers":       {files: []string{inputs + "patches-two-managers.yaml", runtimes + "torch-distributed.yaml"}},
	"namespaced-initializers":    {files: []string{examples + "07-namespaced-runtime.yaml"}},
	"deepspeed-launcher-as-node": {files: []string{examples + "06-deepspeed-mpi.yaml", runtimes + "deepspeed-distributed.yaml"}},
	"mlx-single-node":            {files: []string{inputs + "mlx-single.yaml", runtimes + "mlx-distributed.yaml"}},
	"jax":                        {files: []string{inputs + "jax.yaml", runtimes + "jax-distributed.yaml"}},
	"xgboost-gpu":                {files: []string{inputs + "xgboost-gpu.yaml", runtimes + "xgboost-distributed.yaml"}},
	"xgboost-cpu":                {files: []string{inputs + "xgboost-cpu.yaml", runtimes + "xgboost-distributed.yaml"}},
	"torchtune-initializers":     {files: []string{examples + "05-torchtune-initializers.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"torchtune-1b-single-device": {files: []string{inputs + "tune-1b-single.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"torchtune-1b-multi-device":  {files: []string{inputs + "tune-1b-multi.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"torchtune-1b-lora":          {files: []string{inputs + "tune-1b-lora.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"torchtune-1b-dora":          {files: []string{inputs + "tune-1b-dora.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"torchtune-3b-qlora":         {files: []string{inputs + "tune-3b-qlora.yaml", runtimes + "torchtune-llama3.2-3b.yaml"}},
	"torchtune-qwen-full":        {files: []string{inputs + "tune-qwen-full.yaml", runtimes + "torchtune-qwen2.5-1.5b.yaml"}},
	"volcano-gang":               {files: []string{inputs + "volcano.yaml"}},
	"flux-lammps":                {files: []string{examples + "08-flux-lammps.yaml"}},

	"validate-torchtune-qwen-qlora":        {validate: true, files: []string{inputs + "tune-qwen-qlora.yaml", runtimes + "torchtune-qwen2.5-1.5b.yaml"}},
	"validate-torchtune-1b-multinode":      {validate: true, files: []string{inputs + "tune-1b-multinode.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"validate-torchtune-lora-multinode":    {validate: true, files: []string{inputs + "tune-1b-lora-multinode.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"validate-torchtune-qlora-distributed": {validate: true, files: []string{inputs + "tune-1b-qlora-distributed.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"validate-torchtune-immutable-arg":     {validate: true, files: []string{inputs + "tune-1b-immutable.yaml", runtimes + "torchtune-llama3.2-1b.yaml"}},
	"validate-torch-reserved-env-patches":  {validate: true, files: []string{inputs + "torch-reserved-env.yaml", runtimes + "torch-distributed.yaml"}},
	"validate-volcano-empty-queue":         {validate: true, files: []string{inputs + "volcano-empty-queue.yaml"}},
	"validate-valid-deepspeed":             {validate: true, files: []string{examples + "06-deepspeed-mpi.yaml", runtimes + "deepspeed-distributed.yaml"}},
}

func TestGolden(t *testing.T) {
	rt, err := NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range goldenCases {
		t.Run(name, func(t *testing.T) {
			rt := rt
			if tc.statusOff {
				features.SetFeatureGateDuringTest(t, features.TrainJobStatus, false)
				if rt, err = NewRuntime(); err != nil {
					t.Fatal(err)
				}
			}
			in := readFiles(t, tc.files)
			var got bytes.Buffer
			ext := ".yaml"
			if tc.validate {
				ext = ".txt"
				warnings, errs := Validate(context.Background(), rt, in)
				for _, w := range warnings {
					got.WriteString("warning: " + w + "\n")
				}
				for _, e := range errs {
					got.WriteString("error: " + e.Error() + "\n")
				}
			} else {
				runtimeBefore := in.Runtime.DeepCopyObject()
				objs, err := Objects(context.Background(), rt, in)
				if err != nil {
					t.Fatalf("Objects() error: %v", err)
				}
				// The snapshot's YAML is encoded once per runtime version and shared by every
				// TrainJob of it: building must leave the runtime as it was read.
				if diff := cmp.Diff(runtimeBefore, in.Runtime); diff != "" {
					t.Errorf("Objects() changed the runtime (-before,+after):\n%s", diff)
				}
				redactSecrets(t, objs)
				if err := WriteYAML(&got, objs); err != nil {
					t.Fatal(err)
				}
			}
			path := filepath.Join("testdata", "golden", name+ext)
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading golden file (run with -update to create it): %v", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("output differs from %s (-want,+got):\n%s", path, diff)
			}
		})
	}
}

func readFiles(t *testing.T, files []string) *Input {
	t.Helper()
	sources := make([]Source, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		sources = append(sources, Source{Name: filepath.Base(f), Data: bytes.NewReader(data)})
	}
	in, err := Read(sources)
	if err != nil {
		t.Fatalf("Read() error: %v", err)
	}
	return in
}

// redactSecrets replaces generated key material, which differs on every run, after checking it
// is there.
func redactSecrets(t *testing.T, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, o := range objs {
		if o.GetKind() != "Secret" {
			continue
		}
		data, _, _ := unstructured.NestedMap(o.Object, "data")
		for k, v := range data {
			if s, _ := v.(string); s == "" || strings.TrimSpace(s) == "" {
				t.Errorf("Secret %s key %s is empty", o.GetName(), k)
			}
			data[k] = "<generated>"
		}
		_ = unstructured.SetNestedMap(o.Object, data, "data")
	}
}
