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
)

// Kustomize runs `kustomize build` on a directory of the repository with the toolchain's
// kustomize (bin/kustomize, which `make test-integration` builds).
func Kustomize(dir string) ([]byte, error) {
	bin := filepath.Join(RepoRoot(), "bin", "kustomize")
	if _, err := os.Stat(bin); err != nil {
		return nil, errors.New("kustomize not found in bin/: run 'make test-integration' or 'hack/toolchain.sh kustomize'")
	}
	cmd := exec.Command(bin, "build", filepath.Join(RepoRoot(), dir))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, stderr.String())
	}
	return out, nil
}
