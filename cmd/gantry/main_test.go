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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-ml/gantry/internal/version"
)

func TestRun(t *testing.T) {
	version.Version = "v9.9.9-test"
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string // a prefix
		wantStderr string
	}{
		"version": {
			args:       []string{"version", "--client"},
			wantStdout: "Client Version: v9.9.9-test\n",
		},
		"help": {
			args:       []string{"--help"},
			wantStdout: "gantry submits TrainJobs",
		},
		"render help": {
			args:       []string{"render", "--help"},
			wantStdout: "Prints, as multi-document YAML, every object the Gantry controller would apply",
		},
		"unknown command": {
			args:       []string{"deploy"},
			wantCode:   2,
			wantStderr: "error: unknown command \"deploy\" for \"gantry\"\n",
		},
		"runtimes without a verb": {
			args:       []string{"runtimes"},
			wantCode:   2,
			wantStderr: "error: give a subcommand: get, install, list, uninstall\n",
		},
		"unknown runtimes verb": {
			args:       []string{"runtimes", "apply"},
			wantCode:   2,
			wantStderr: "error: unknown command \"apply\" for \"gantry runtimes\"\n",
		},
		"an unknown flag": {
			args:       []string{"list", "--force"},
			wantCode:   2,
			wantStderr: "error: unknown flag: --force\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, nil, &stdout, &stderr)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s", diff)
			}
			if !strings.HasPrefix(stdout.String(), tc.wantStdout) {
				t.Errorf("stdout = %q, want it to start with %q", stdout.String(), tc.wantStdout)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRunRuntimesUsage(t *testing.T) {
	cases := map[string]struct {
		args []string
		want string
	}{
		"install without a selector":  {args: []string{"install", "--dir", "x"}, want: "--selector is required"},
		"install without a directory": {args: []string{"install", "--selector", "a=b"}, want: "--dir is required"},
		"uninstall with a directory":  {args: []string{"uninstall", "--selector", "a=b", "--dir", "x"}, want: "unknown flag: --dir"},
		"a bad selector":              {args: []string{"uninstall", "--selector", "a==="}, want: "--selector: unable to parse requirement: found '=', expected: identifier"},
		"an extra argument":           {args: []string{"uninstall", "--selector", "a=b", "more"}, want: `unexpected argument "more": gantry runtimes uninstall takes flags only (see --help)`},
		"an unknown flag":             {args: []string{"uninstall", "--force"}, want: "unknown flag: --force"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"runtimes"}, tc.args...), nil, &stdout, &stderr)
			if code != 2 {
				t.Errorf("exit code %d, want 2", code)
			}
			if diff := cmp.Diff("error: "+tc.want+"\n", stderr.String()); diff != "" {
				t.Errorf("stderr (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestRunRuntimesBadInput(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.yaml"), []byte("apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"runtimes", "install", "--dir", dir, "--selector", "a=b"}, nil, &stdout, &stderr)
	want := "gantry runtimes install: " + filepath.Join(dir, "a.yaml") + `: /v1, Kind=Secret "s" is not a trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime` + "\n"
	if diff := cmp.Diff(want, stderr.String()); diff != "" || code != 2 {
		t.Errorf("exit code %d (want 2), stderr (-want,+got):\n%s", code, diff)
	}
}
