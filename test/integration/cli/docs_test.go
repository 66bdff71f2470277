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
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-ml/gantry/test/util"
)

// outputMarker names what the fenced block after it shows: a golden file of this suite, or a
// command's help between two headings.
var outputMarker = regexp.MustCompile("(?m)^<!-- output: (.+?) -->\n```\n((?s:.*?))```\n")

// TestDocsShowRealOutput keeps the README and every page under docs/ true: every block marked
// as an output must be what the command prints (goldens are checked against the commands by the
// suite).
func TestDocsShowRealOutput(t *testing.T) {
	t.Cleanup(func() {
		if built.path != "" {
			_ = os.RemoveAll(filepath.Dir(built.path))
		}
	})
	docs := []string{"README.md"}
	err := filepath.WalkDir(filepath.Join(util.RepoRoot(), "docs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".md") {
			rel, _ := filepath.Rel(util.RepoRoot(), path)
			docs = append(docs, rel)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range docs {
		data, err := os.ReadFile(filepath.Join(util.RepoRoot(), doc))
		if err != nil {
			t.Fatal(err)
		}
		found := outputMarker.FindAllStringSubmatch(string(data), -1)
		if doc == "docs/cli.md" && len(found) < 4 {
			t.Errorf("%s: %d marked outputs, want at least 4", doc, len(found))
		}
		for _, m := range found {
			source, block := m[1], m[2]
			want := expectedOutput(t, source)
			// The block starts with the command line it shows, which the output lacks.
			if strings.HasPrefix(block, "$ ") {
				_, block, _ = strings.Cut(block, "\n")
			}
			if diff := cmp.Diff(normalize(want), normalize(block)); diff != "" {
				t.Errorf("%s: the block marked %q is not the real output (-real +doc):\n%s", doc, source, diff)
			}
		}
	}
}

var built struct {
	once sync.Once
	path string
	err  error
}

// gantryBinary builds cmd/gantry once: the docs show the binary's help, render included.
func gantryBinary(t *testing.T) string {
	built.once.Do(func() {
		dir, err := os.MkdirTemp("", "gantry-docs-")
		if err != nil {
			built.err = err
			return
		}
		built.path, built.err = util.BuildCmd(dir, "gantry")
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

func expectedOutput(t *testing.T, source string) string {
	t.Helper()
	if golden, ok := strings.CutPrefix(source, "testdata/"); ok {
		data, err := os.ReadFile(filepath.Join("testdata", golden))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	// "gantry ARGS | FROM..TO": the lines from the one starting with FROM up to (not
	// including) the one starting with TO.
	cmdline, span, _ := strings.Cut(source, " | ")
	from, to, _ := strings.Cut(span, "..")
	var out, errOut bytes.Buffer
	cmd := exec.Command(gantryBinary(t), strings.Fields(strings.TrimPrefix(cmdline, "gantry "))...)
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s: %v: %s", cmdline, err, errOut.String())
	}
	var kept []string
	in := false
	for _, l := range strings.SplitAfter(out.String(), "\n") {
		switch {
		case strings.HasPrefix(l, from):
			in = true
		case strings.HasPrefix(l, to):
			in = false
		}
		if in {
			kept = append(kept, l)
		}
	}
	return strings.Join(kept, "")
}
