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
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKubectlPlugin installs the binary as `make install` does and runs it the two ways kubectl
// does: as kubectl-gantry, and kubectl_complete-gantry for completion.
func TestKubectlPlugin(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	src, dest := t.TempDir(), t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(src, "gantry"), ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	install := exec.Command(filepath.Join("..", "..", "hack", "kubectl-plugin.sh"), src, dest)
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("kubectl-plugin.sh: %v\n%s", err, out)
	}
	for _, name := range []string{"gantry", "kubectl-gantry", "kubectl_complete-gantry"} {
		if fi, err := os.Stat(filepath.Join(dest, name)); err != nil || fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not an executable in the install directory: %v", name, err)
		}
	}

	out, err := exec.Command(filepath.Join(dest, "kubectl-gantry"), "--help").Output()
	if err != nil {
		t.Fatalf("kubectl-gantry --help: %v", err)
	}
	if !strings.Contains(string(out), "Usage:\n  kubectl gantry [command]") {
		t.Errorf("kubectl-gantry --help does not name itself kubectl gantry:\n%s", out)
	}

	// kubectl calls the shim with the words after `kubectl gantry`.
	out, err = exec.Command(filepath.Join(dest, "kubectl_complete-gantry"), "runtimes", "").Output()
	if err != nil {
		t.Fatalf("kubectl_complete-gantry: %v", err)
	}
	want := []string{"get\tShow one runtime: the namespace's TrainingRuntime first, else the ClusterTrainingRuntime",
		"install\tThe Helm chart's runtime installer: install the shipped ClusterTrainingRuntimes",
		"list\tList the TrainingRuntimes of the namespace and the ClusterTrainingRuntimes",
		"uninstall\tThe Helm chart's runtime installer: uninstall the shipped ClusterTrainingRuntimes", ":4"}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(string(out)), "\n")); diff != "" {
		t.Errorf("completion of `kubectl gantry runtimes ` (-want +got):\n%s", diff)
	}
}
