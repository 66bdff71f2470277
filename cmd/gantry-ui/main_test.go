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
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunExitCodes(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "absent-kubeconfig")
	cases := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string
		wantErrOut string
	}{
		{name: "help", args: []string{"--help"}, wantCode: exitOK, wantOut: "gantry-ui serves Gantry's web UI"},
		{name: "help names the connection flags", args: []string{"-h"}, wantCode: exitOK, wantOut: "--request-timeout"},
		{name: "version", args: []string{"--version"}, wantCode: exitOK, wantOut: "gantry-ui "},
		{name: "unknown flag", args: []string{"--bogus"}, wantCode: exitUsage, wantErrOut: "unknown flag: --bogus"},
		{name: "an argument", args: []string{"jobs"}, wantCode: exitUsage, wantErrOut: `gantry-ui takes no arguments, got ["jobs"]`},
		{name: "auth mode", args: []string{"--auth-mode", "oidc"}, wantCode: exitUsage,
			wantErrOut: `--auth-mode must be "kubeconfig", "token" or "header", got "oidc"`},
		{name: "history", args: []string{"--history", "disk"}, wantCode: exitUsage, wantErrOut: `--history must be "memory" or "configmap", got "disk"`},
		{name: "history points", args: []string{"--history-points", "1"}, wantCode: exitUsage, wantErrOut: "--history-points must be at least 2, got 1"},
		{name: "history metric names", args: []string{"--history-metric-names", "0"}, wantCode: exitUsage,
			wantErrOut: "--history-metric-names must be at least 1, got 0"},
		{name: "history memory", args: []string{"--history-memory", "lots"}, wantCode: exitUsage,
			wantErrOut: `--history-memory "lots": a quantity such as 48Mi`},
		{name: "history memory too small", args: []string{"--history-memory", "100Ki"}, wantCode: exitUsage,
			wantErrOut: "--history-memory must be at least 1Mi, got 100Ki"},
		{name: "kubeconfig mode off loopback", args: []string{"--address", "0.0.0.0:8080"}, wantCode: exitUsage,
			wantErrOut: "kubeconfig mode serves your own identity, so it listens on loopback only"},
		{name: "header mode without the proxy's proof", args: []string{"--auth-mode", "header", "--address", "0.0.0.0:8080"}, wantCode: exitUsage,
			wantErrOut: "--auth-mode=header trusts the user header only from a verified proxy: set --proxy-secret-file"},
		{name: "groups header without allowed groups", args: []string{"--auth-mode", "header", "--proxy-secret-file", missing, "--groups-header", "kubeflow-groups"},
			wantCode: exitUsage, wantErrOut: "--groups-header kubeflow-groups needs --allowed-groups"},
		{name: "unreadable proxy secret", args: []string{"--auth-mode", "header", "--proxy-secret-file", missing},
			wantCode: exitUsage, wantErrOut: "--proxy-secret-file: open " + missing},
		{name: "kubeconfig missing", args: []string{"--kubeconfig", missing}, wantCode: exitUsage, wantErrOut: "error: loading the kubeconfig:"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(context.Background(), tc.args, &out, &errOut)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s\nstderr: %s", diff, errOut.String())
			}
			if !strings.Contains(out.String(), tc.wantOut) {
				t.Errorf("stdout %q does not contain %q", out.String(), tc.wantOut)
			}
			if !strings.Contains(errOut.String(), tc.wantErrOut) {
				t.Errorf("stderr %q does not contain %q", errOut.String(), tc.wantErrOut)
			}
		})
	}
}

// TestLean keeps gantry-ui small: its resident memory is mostly the code it maps (issue budget
// 80 MiB with 1,000 jobs), so it must not link the controller, the render pipeline, kubectl's
// libraries or the clientset of every API group.
func TestLean(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	heavy := []string{
		"k8s.io/client-go/kubernetes",
		"k8s.io/cli-runtime/pkg/resource",
		"sigs.k8s.io/controller-runtime/pkg/manager",
		"github.com/gantry-ml/gantry/internal/runtime/framework",
		"github.com/gantry-ml/gantry/internal/cli",
		"github.com/google/cel-go/cel",
	}
	deps := map[string]bool{}
	for p := range strings.SplitSeq(string(out), "\n") {
		deps[p] = true
	}
	var linked []string
	for _, p := range heavy {
		if deps[p] {
			linked = append(linked, p)
		}
	}
	if diff := cmp.Diff([]string(nil), linked); diff != "" {
		t.Errorf("gantry-ui links heavy packages (-want,+got):\n%s", diff)
	}
}
