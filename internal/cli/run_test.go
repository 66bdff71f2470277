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
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// localJob is test/localrun's two-node torchrun job; its runtime is the shipped torch-distributed.
const localJob = "../../test/localrun/testdata/job.yaml"

// TestRunFlags covers gantry run's flags and what it refuses before running anything; running
// is test/localrun's. --dry-run plans without running.
func TestRunFlags(t *testing.T) {
	cases := map[string]struct {
		cluster fixture
		args    []string
		stdin   string
		want    result
	}{
		"no --local": {
			args: []string{"run", "-f", localJob},
			want: usage("gantry run runs on this machine only: give --local (gantry train submits to the cluster)"),
		},
		"no file": {
			args: []string{"run", "--local"},
			want: usage("give the TrainJob with -f FILE"),
		},
		"-o without --dry-run": {
			args: []string{"run", "--local", "-f", localJob, "-o", "json"},
			want: usage(`-o: only "json", with --dry-run`),
		},
		"-o yaml": {
			args: []string{"run", "--local", "-f", localJob, "--dry-run", "-o", "yaml"},
			want: usage(`-o: only "json", with --dry-run`),
		},
		"an unknown --runtime-source": {
			args: []string{"run", "--local", "-f", localJob, "--runtime-source", "hub"},
			want: usage(`--runtime-source must be "auto", "cluster" or "shipped", got "hub"`),
		},
		"an argument": {
			args: []string{"run", "--local", "job.yaml"},
			want: usage(`unknown command "job.yaml" for "gantry run"`),
		},
		"a missing file": {
			args: []string{"run", "--local", "-f", "/nonexistent.yaml"},
			want: usage("open /nonexistent.yaml: no such file or directory"),
		},
		"input that cannot be read": {
			args:  []string{"run", "--local", "-f", "-"},
			stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			want:  usage(`<stdin>: document 1: unknown kind "Pod" (apiVersion "v1"): want TrainJob, TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org/v1alpha1`),
		},
		"a runtime that is not shipped: 4": {
			args:  []string{"run", "--local", "-f", "-", "--runtime-source", "shipped"},
			stdin: strings.Replace(trainJobYAML, "torch-distributed", "nope", 1),
			want:  failed(ExitNotFound, `ClusterTrainingRuntime "nope" not found in the files, on the cluster or among the runtimes Gantry ships`),
		},
		"a runtime the cluster lacks, from the cluster only: 4": {
			cluster: fixture{objs: []client.Object{torchRuntime()}},
			args:    []string{"run", "--local", "-f", "-", "--runtime-source", "cluster"},
			stdin:   strings.Replace(trainJobYAML, "torch-distributed", "nope", 1),
			want:    failed(ExitNotFound, `ClusterTrainingRuntime "nope" is neither in the files nor on the cluster`),
		},
		"a job the cluster would refuse": {
			args:  []string{"run", "--local", "-f", "-", "--runtime-source", "shipped"},
			stdin: strings.Replace(trainJobYAML, "name: from-file", "name: 1bad", 1),
			want:  usage("the cluster would refuse this TrainJob:\n  Invalid value: metadata.name must match RFC 1035 DNS label format"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil {
				c = fixture{unreachable: true}
			}
			c.stdin = tc.stdin
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}

// TestRunDryRun: the plan's steps, as README shows them; the rest of it (ports, the machine's
// torch) varies.
func TestRunDryRun(t *testing.T) {
	workdir := filepath.Join(t.TempDir(), "ddp")
	got := fixture{unreachable: true}.run(t, "run", "--local", "-f", localJob, "--dry-run", "--runtime-source", "shipped", "--workdir", workdir)
	head, _, _ := strings.Cut(got.Stdout, "\nnode-0 (")
	want := "Plan of TrainJob default/ddp in " + workdir + `

STEP    INDEX  AFTER  COMMAND
node-0  0      -      /usr/bin/torchrun ddp.py
node-1  1      -      /usr/bin/torchrun ddp.py
`
	if diff := cmp.Diff(result{Stdout: want}, result{Code: got.Code, Stdout: head, Stderr: got.Stderr}); diff != "" {
		t.Errorf("--dry-run (-want,+got):\n%s", diff)
	}

	got = fixture{unreachable: true}.run(t, "run", "--local", "-f", localJob, "--dry-run", "-o", "json", "--runtime-source", "shipped", "--workdir", workdir)
	var plan struct {
		TrainJob string `json:"trainJob"`
		Workdir  string `json:"workdir"`
		Steps    []struct {
			Name string `json:"name"`
		} `json:"steps"`
	}
	if err := json.Unmarshal([]byte(got.Stdout), &plan); err != nil || got.Code != ExitOK {
		t.Fatalf("--dry-run -o json: exit %d, %v:\n%s%s", got.Code, err, got.Stdout, got.Stderr)
	}
	if diff := cmp.Diff("ddp "+workdir+" [node-0 node-1]", plan.TrainJob+" "+plan.Workdir+" "+stepNames(plan.Steps)); diff != "" {
		t.Errorf("--dry-run -o json (-want,+got):\n%s", diff)
	}
}

func stepNames(steps []struct {
	Name string `json:"name"`
}) string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name
	}
	return "[" + strings.Join(names, " ") + "]"
}
