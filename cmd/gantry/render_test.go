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

package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const (
	torchRuntime = "../../config/runtimes/torch-distributed.yaml"
	torchJob     = "../../examples/01-torch-multi-node.yaml"
)

// invalidJob breaks a schema pattern, a webhook rule and a CEL rule.
const invalidJob = "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: 1bad}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numProcPerNode: 0\n    env: [{name: PET_NNODES, value: '1'}]\n"

var invalidJobErrors = []string{"error: Invalid value: metadata.name must match RFC 1035 DNS label format\n", "error: spec.trainer.env: Invalid value:",
	"error: spec.trainer.numProcPerNode: Invalid value: 0: numProcPerNode must be greater than or equal to 1\n"}

func TestRenderCommand(t *testing.T) {
	cases := map[string]struct {
		args           []string
		stdin          string
		wantCode       int
		wantStdoutHas  []string
		wantStderr     string
		wantStderrHas  string
		wantStdoutNone bool
		wantStdoutNot  []string
	}{
		"the status server injection and CA ConfigMap, with a placeholder CA": {
			args: []string{"-f", torchJob, "-f", torchRuntime},
			wantStdoutHas: []string{"name: gantry-status-server-ca\n", "<ca.crt of Secret kubeflow-system/kubeflow-trainer-webhook-cert>\n",
				"value: https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/default/trainjobs/torch-mnist/status\n"},
		},
		"the cluster's CA from a file": {
			args:          []string{"-f", torchJob, "-f", torchRuntime, "--status-server-ca", "testdata/ca.crt"},
			wantStdoutHas: []string{"name: gantry-status-server-ca\n", "    -----BEGIN CERTIFICATE-----\n"},
			wantStdoutNot: []string{"<ca.crt of Secret"},
		},
		"a CA file without a certificate": {
			args:       []string{"-f", torchJob, "-f", torchRuntime, "--status-server-ca", torchRuntime},
			wantCode:   2,
			wantStderr: "gantry render: --status-server-ca: " + torchRuntime + " holds no PEM certificate\n",
		},
		"TrainJobStatus off": {
			args:          []string{"-f", torchJob, "-f", torchRuntime, "--feature-gates", "TrainJobStatus=false"},
			wantStdoutHas: []string{"kind: JobSet\n"},
			wantStdoutNot: []string{"gantry-status-server-ca", "KUBEFLOW_TRAINER_SERVER", "kubeflow-trainer-token"},
		},
		"an unknown feature gate": {
			args:          []string{"-f", torchJob, "-f", torchRuntime, "--feature-gates", "Nope=true"},
			wantCode:      2,
			wantStderrHas: "gantry render: invalid --feature-gates: unrecognized feature gate: Nope",
		},
		"renders a TrainJob and its runtime": {
			args:          []string{"-f", torchJob, "-f", torchRuntime},
			wantStdoutHas: []string{"kind: ConfigMap\n", "name: torch-mnist-runtime-snapshot\n", "---\n", "kind: JobSet\n", "value: torch-mnist-node-0-0.torch-mnist\n"},
		},
		"reads one multi-document stream from stdin": {
			args:          []string{"-f", "-"},
			stdin:         "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: rt}\nspec:\n  template:\n    spec:\n      replicatedJobs:\n      - name: node\n        template:\n          metadata:\n            labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}\n          spec:\n            template:\n              spec:\n                containers: [{name: node, image: busybox}]\n---\napiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job, namespace: team}\nspec:\n  runtimeRef: {name: rt}\n",
			wantStdoutHas: []string{"namespace: team\n", "kind: JobSet\n", "image: busybox\n"},
		},
		"validate only: a valid TrainJob": {
			args:           []string{"--validate-only", "-f", torchJob, "-f", torchRuntime},
			wantStdoutNone: true,
		},
		"validate only: errors exit 1": {
			args:          []string{"--validate-only", "-f", "-", "-f", torchRuntime},
			stdin:         invalidJob,
			wantCode:      1,
			wantStdoutHas: invalidJobErrors,
		},
		"validates before rendering: errors on stderr, nothing rendered, exit 1": {
			args:           []string{"-f", "-", "-f", torchRuntime},
			stdin:          invalidJob,
			wantCode:       1,
			wantStderrHas:  invalidJobErrors[2],
			wantStdoutNone: true,
		},
		"--validate=false renders what the cluster would refuse": {
			args:          []string{"--validate=false", "-f", "-", "-f", torchRuntime},
			stdin:         invalidJob,
			wantStdoutHas: []string{"kind: JobSet\n", "name: 1bad\n"},
		},
		"--help prints the usage": {
			args:          []string{"--help"},
			wantStdoutHas: []string{"Usage:\n  gantry render -f FILE", "Exit codes: 0 rendered", "-f, --filename FILE"},
		},
		"checks what the apiserver checks: list-map keys and metadata": {
			args:     []string{"--validate-only", "-f", "-", "-f", torchRuntime},
			stdin:    "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job, labels: {'bad key!': x}}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    env: [{name: A, value: '1'}, {name: A, value: '2'}]\n",
			wantCode: 1,
			wantStdoutHas: []string{"error: spec.trainer.env[1]: Duplicate value: {\"name\":\"A\"}\n",
				"error: metadata.labels: Invalid value: \"bad key!\": name part must consist of alphanumeric characters"},
		},
		"a null where the schema allows none is dropped, as the apiserver does": {
			args:          []string{"-f", "-", "-f", torchRuntime},
			stdin:         "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer:\n    numNodes: null\n",
			wantStdoutHas: []string{"kind: JobSet\n"},
		},
		"no file": {
			args:       nil,
			wantCode:   2,
			wantStderr: "error: give at least one -f FILE\n",
		},
		"missing file": {
			args:          []string{"-f", "nope.yaml"},
			wantCode:      2,
			wantStderrHas: "gantry render: open nope.yaml: no such file or directory",
		},
		"unknown kind": {
			args:       []string{"-f", "-"},
			stdin:      "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: unknown kind \"Pod\" (apiVersion \"v1\"): want TrainJob, TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org/v1alpha1\n",
		},
		"malformed YAML": {
			args:          []string{"-f", "-"},
			stdin:         "kind: [TrainJob\n",
			wantCode:      2,
			wantStderrHas: "gantry render: <stdin>: document 1: malformed YAML:",
		},
		"a key given twice": {
			args:       []string{"-f", "-", "-f", torchRuntime},
			stdin:      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: torch-distributed}\n  runtimeRef: {name: x}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin>: document 1: malformed YAML: error converting YAML to JSON: yaml: unmarshal errors: line 6: key \"runtimeRef\" already set in map\n",
		},
		"a value of the wrong type names the field": {
			args:       []string{"-f", "-", "-f", torchRuntime},
			stdin:      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNodes: four}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.trainer.numNodes: Invalid value: \"string\": spec.trainer.numNodes in body must be of type integer: \"string\"\n",
		},
		"unknown field": {
			args:       []string{"-f", "-", "-f", torchRuntime},
			stdin:      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: torch-distributed}\n  trainer: {numNode: 2}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): unknown field \"spec.trainer.numNode\"\n",
		},
		"missing runtime": {
			args:       []string{"-f", torchJob},
			wantCode:   2,
			wantStderr: "gantry render: ../../examples/01-torch-multi-node.yaml (document 1, TrainJob \"torch-mnist\"): spec.runtimeRef: ClusterTrainingRuntime \"torch-distributed\" is not in the input: add its file with -f\n",
		},
		"no TrainJob": {
			args:       []string{"-f", torchRuntime},
			wantCode:   2,
			wantStderr: "gantry render: no TrainJob in the input: give one with -f\n",
		},
		"unsupported runtime kind": {
			args:       []string{"-f", "-"},
			stdin:      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata: {name: job}\nspec:\n  runtimeRef: {name: x, apiGroup: example.com, kind: Blueprint}\n",
			wantCode:   2,
			wantStderr: "gantry render: <stdin> (document 1, TrainJob \"job\"): spec.runtimeRef: unsupported runtime: Blueprint.example.com\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"render"}, tc.args...), strings.NewReader(tc.stdin), &stdout, &stderr)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s\nstderr: %s", diff, stderr.String())
			}
			for _, s := range tc.wantStdoutHas {
				if !strings.Contains(stdout.String(), s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout.String())
				}
			}
			if tc.wantStdoutNone && stdout.Len() > 0 {
				t.Errorf("stdout should be empty:\n%s", stdout.String())
			}
			for _, s := range tc.wantStdoutNot {
				if strings.Contains(stdout.String(), s) {
					t.Errorf("stdout has %q:\n%s", s, stdout.String())
				}
			}
			if tc.wantStderr != "" {
				if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
					t.Errorf("stderr (-want,+got):\n%s", diff)
				}
			}
			if tc.wantStderrHas != "" && !strings.Contains(stderr.String(), tc.wantStderrHas) {
				t.Errorf("stderr lacks %q: %s", tc.wantStderrHas, stderr.String())
			}
			if tc.wantCode == 0 && stderr.Len() > 0 {
				t.Errorf("unexpected stderr: %s", stderr.String())
			}
		})
	}
}
