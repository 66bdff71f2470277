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

// Package util holds helpers shared by the integration and end-to-end suites.
package util

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Polling settings for Eventually and Consistently.
const (
	Timeout  = 10 * time.Second
	Interval = 250 * time.Millisecond
)

// RepoRoot is the root of the Gantry checkout, found from this file's location.
func RepoRoot() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		panic("cannot locate test/util/util.go")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ModuleDir returns the directory of a dependency in the Go module cache, so external CRDs are
// read from the exact module version go.mod pins instead of being copied into the repository.
func ModuleDir(module string) (string, error) {
	return ModuleDirIn(RepoRoot(), module)
}

// ModuleDirIn is ModuleDir for the module rooted at dir (test/differential is a module of its
// own, with dependencies Gantry's go.mod does not have).
func ModuleDirIn(dir, module string) (string, error) {
	cmd := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", module)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("locating module %s: %w: %s", module, err, stderr.String())
	}
	moduleDir := strings.TrimSpace(string(out))
	if moduleDir == "" {
		// Listed but not downloaded yet.
		dl := exec.Command("go", "mod", "download", module)
		dl.Dir = dir
		if out, err := dl.CombinedOutput(); err != nil {
			return "", fmt.Errorf("downloading module %s: %w: %s", module, err, out)
		}
		return ModuleDirIn(dir, module)
	}
	return moduleDir, nil
}

// EnvtestAssets returns the directory holding kube-apiserver, etcd and kubectl: KUBEBUILDER_ASSETS
// when set, else the repository's bin/ that hack/toolchain.sh fills.
func EnvtestAssets() (string, error) {
	dir := os.Getenv("KUBEBUILDER_ASSETS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "bin")
	}
	for _, name := range []string{"kube-apiserver", "etcd"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			return "", fmt.Errorf("%s not found in %s: run 'make envtest-assets' (or set KUBEBUILDER_ASSETS)", name, dir)
		}
	}
	return dir, nil
}
