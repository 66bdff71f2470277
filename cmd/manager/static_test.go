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
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStaticBuild builds the image's binaries (the manager, the gantry CLI and gantry-ui) as the Dockerfile
// does and checks that they need no dynamic loader or shared library, so they run on a
// distroless static base.
func TestStaticBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the manager")
	}
	out := t.TempDir()
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", out+"/", ".", "../gantry", "../gantry-ui")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	for _, name := range []string{"manager", "gantry", "gantry-ui"} {
		t.Run(name, func(t *testing.T) { checkStatic(t, filepath.Join(out, name)) })
	}
}

func checkStatic(t *testing.T, path string) {
	f, err := elf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("the binary has a %v program header: it is not static", p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("imported libraries %v (%v), want none", libs, err)
	}
}

// TestDockerfileCopiesEverySource checks that the Dockerfile's build stage copies every directory
// of this module that the image's binaries import from: a package moved to a new top-level
// directory must not break `docker build` where no test runs it.
func TestDockerfileCopiesEverySource(t *testing.T) {
	const module = "github.com/gantry-ml/gantry/"
	out, err := exec.Command("go", "list", "-deps", ".", "../gantry", "../gantry-ui").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	dockerfile, err := os.ReadFile("../../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var copied []string
	for line := range strings.SplitSeq(string(dockerfile), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "COPY" {
			copied = append(copied, strings.TrimSuffix(f[1], "/"))
		}
	}
	var missing []string
	for pkg := range strings.SplitSeq(string(out), "\n") {
		rel, ok := strings.CutPrefix(pkg, module)
		if !ok {
			continue
		}
		if !slices.ContainsFunc(copied, func(dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }) {
			missing = append(missing, rel)
		}
	}
	if diff := cmp.Diff([]string(nil), missing); diff != "" {
		t.Errorf("directories the binaries import from that the Dockerfile does not COPY (-want,+got):\n%s", diff)
	}
}
