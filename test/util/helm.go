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

package util

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-ml/gantry/internal/manifest"
)

// ChartDir is the Helm chart's directory.
func ChartDir() string { return filepath.Join(RepoRoot(), "charts", "gantry") }

// HelmCommand prepares the toolchain's helm (bin/helm) with args, run from the repository root
// with its caches in dir, so nothing lands in the user's home. JobSet's subchart is copied from
// the module cache first (hack/helm-deps.sh), as every make target that renders the chart does,
// so a plain `go test` works too.
func HelmCommand(dir string, args ...string) (*exec.Cmd, error) {
	bin := filepath.Join(RepoRoot(), "bin", "helm")
	if _, err := os.Stat(bin); err != nil {
		return nil, errors.New("helm not found in bin/: run 'make test-integration' or 'hack/toolchain.sh helm'")
	}
	deps := exec.Command(filepath.Join(RepoRoot(), "hack", "helm-deps.sh"))
	if out, err := deps.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hack/helm-deps.sh: %w: %s", err, out)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = RepoRoot()
	cmd.Env = append(os.Environ(), "HELM_CACHE_HOME="+dir, "HELM_CONFIG_HOME="+dir, "HELM_DATA_HOME="+dir)
	return cmd, nil
}

// Helm runs helm with args and returns its stdout.
func Helm(args ...string) ([]byte, error) {
	tmp, err := os.MkdirTemp("", "gantry-helm-")
	if err != nil {
		return nil, err
	}
	defer func() { _ = os.RemoveAll(tmp) }()
	cmd, err := HelmCommand(tmp, args...)
	if err != nil {
		return nil, err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("helm %v: %w: %s", args, err, stderr.String())
	}
	return out, nil
}

// HelmTemplate renders the chart as release `gantry` in namespace ns with the extra helm
// arguments (--set, -f, ...).
func HelmTemplate(ns string, args ...string) ([]*unstructured.Unstructured, error) {
	out, err := Helm(append([]string{"template", "gantry", ChartDir(), "--namespace", ns}, args...)...)
	if err != nil {
		return nil, err
	}
	return manifest.Decode(out)
}
