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
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// render's own cases (hostile input, every diagnostic) are cmd/gantry's; these pin its flags,
// its help and its exit codes in the one command tree, against internal/render's golden files.
const (
	renderGolden = "../render/testdata/golden/"
	renderInputs = "../render/testdata/inputs/"
	shippedTorch = "../../config/runtimes/torch-distributed.yaml"
	torchExample = "../../examples/01-torch-multi-node.yaml"
	// renderUsage is its help between the description and the global (connection) flags.
	renderUsage = `Usage:
  gantry render -f FILE [-f FILE ...] [flags]

Examples:
  gantry render -f examples/01-torch-multi-node.yaml -f config/runtimes/torch-distributed.yaml
  gantry render --validate-only -f job.yaml -f runtime.yaml
  cat job.yaml runtime.yaml | gantry render -f - --feature-gates TrainJobStatus=false

Flags:
      --feature-gates G=bool    Feature gates as the manager takes them, G=bool,..., e.g. TrainJobStatus=false.
  -f, --filename FILE           A YAML FILE with one or more documents; "-" reads standard input (repeatable).
  -h, --help                    help for render
      --status-server-ca FILE   A PEM CA certificate FILE to put into gantry-status-server-ca.
      --validate                Run the admission checks first; --validate=false renders without them. (default true)
      --validate-only           Print the admission checks' error and warning lines on standard output instead of rendering.

`
)

func readGolden(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestRender(t *testing.T) {
	job := readGolden(t, torchExample)
	cases := map[string]struct {
		args  []string
		stdin string
		want  result
	}{
		"renders as the golden file": {
			args: []string{"render", "-f", torchExample, "--filename", shippedTorch, "--feature-gates", "TrainJobStatus=false"},
			want: result{Stdout: readGolden(t, renderGolden+"torch-trainjobstatus-off.yaml")},
		},
		"standard input": {
			args:  []string{"render", "-f", "-", "-f", shippedTorch, "--feature-gates=TrainJobStatus=false"},
			stdin: job,
			want:  result{Stdout: readGolden(t, renderGolden+"torch-trainjobstatus-off.yaml")},
		},
		"--validate-only: the refusals on standard output, 1": {
			args: []string{"render", "--validate-only", "-f", renderInputs + "torch-reserved-env.yaml", "-f", shippedTorch},
			want: result{Code: exitRefused, Stdout: readGolden(t, renderGolden+"validate-torch-reserved-env-patches.txt")},
		},
		"--validate-only: valid": {
			args: []string{"render", "--validate-only", "-f", torchExample, "-f", shippedTorch},
			want: result{},
		},
		"the refusals on standard error, nothing rendered, 1": {
			args: []string{"render", "-f", renderInputs + "torch-reserved-env.yaml", "-f", shippedTorch},
			want: result{Code: exitRefused, Stderr: readGolden(t, renderGolden+"validate-torch-reserved-env-patches.txt")},
		},
		"input that cannot be read: 2, in render's own words": {
			args:  []string{"render", "-f", "-"},
			stdin: "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n",
			want: result{Code: ExitUsage, Stderr: `gantry render: <stdin>: document 1: unknown kind "Pod" (apiVersion "v1"): want TrainJob, TrainingRuntime or ClusterTrainingRuntime of trainer.kubeflow.org/v1alpha1
`},
		},
		"a missing file": {
			args: []string{"render", "-f", "/nonexistent.yaml"},
			want: result{Code: ExitUsage, Stderr: "gantry render: open /nonexistent.yaml: no such file or directory\n"},
		},
		"an unknown feature gate": {
			args: []string{"render", "-f", torchExample, "-f", shippedTorch, "--feature-gates", "Nope=true"},
			want: result{Code: ExitUsage, Stderr: "gantry render: invalid --feature-gates: unrecognized feature gate: Nope\n"},
		},
		"a CA file that is no certificate": {
			args: []string{"render", "-f", torchExample, "-f", shippedTorch, "--status-server-ca", shippedTorch},
			want: result{Code: ExitUsage, Stderr: "gantry render: --status-server-ca: " + shippedTorch + " holds no PEM certificate\n"},
		},
		"no file": {
			args: []string{"render", "--validate-only"},
			want: usage("give at least one -f FILE"),
		},
		"a file without -f": {
			args: []string{"render", torchExample},
			want: usage(`unexpected argument "` + torchExample + `": gantry render takes flags only (see --help)`),
		},
		"-f without its file": {
			args: []string{"render", "-f"},
			want: usage("flag needs an argument: 'f' in -f"),
		},
		"a --validate that is no boolean": {
			args: []string{"render", "-f", torchExample, "--validate=maybe"},
			want: usage(`invalid argument "maybe" for "--validate" flag: strconv.ParseBool: parsing "maybe": invalid syntax`),
		},
		"an unknown flag": {
			args: []string{"render", "--output", "json"},
			want: usage("unknown flag: --output"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, fixture{unreachable: true, stdin: tc.stdin}.run(t, tc.args...))
		})
	}
}

func TestRenderHelp(t *testing.T) {
	got := fixture{unreachable: true}.run(t, "render", "--help")
	description, usage, _ := strings.Cut(got.Stdout, "\nUsage:\n")
	usage, _, found := strings.Cut("Usage:\n"+usage, "Global Flags:\n")
	if diff := cmp.Diff(renderUsage, usage); diff != "" || !found || got.Code != ExitOK {
		t.Errorf("exit code %d, help up to the global flags (-want,+got):\n%s", got.Code, diff)
	}
	if !strings.HasPrefix(description, "Prints, as multi-document YAML") || !strings.Contains(description, "\nExit codes: 0 rendered") {
		t.Errorf("the description lacks what render prints or its exit codes:\n%s", description)
	}
}
