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
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testMachinery are the packages of the module that exist for tests only: the faults the
// reliability and local-run suites inject, and the local cluster they run on.
var testMachinery = []string{
	"github.com/gantry-ml/gantry/internal/faults",
	"github.com/gantry-ml/gantry/test/",
}

// TestNoTestMachineryInBinaries: the binaries Gantry ships (the manager, the gantry CLI and
// gantry-ui) link no test machinery. Faults reach them only through files built with -tags
// faults, which the suites that inject them build with; that build, and only it, links them, so
// the check cannot pass for want of looking.
func TestNoTestMachineryInBinaries(t *testing.T) {
	cases := map[string]struct {
		tags []string
		want []string
	}{
		"as shipped": {},
		"as the reliability and local-run suites build them": {tags: []string{"-tags", "faults"},
			want: []string{"github.com/gantry-ml/gantry/internal/faults"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			args := append(append([]string{"list", "-deps"}, tc.tags...), ".", "../gantry", "../gantry-ui")
			out, err := exec.Command("go", args...).Output()
			if err != nil {
				t.Fatalf("go %s: %v", strings.Join(args, " "), err)
			}
			var got []string
			for pkg := range strings.SplitSeq(string(out), "\n") {
				if slices.ContainsFunc(testMachinery, func(p string) bool { return pkg == p || strings.HasSuffix(p, "/") && strings.HasPrefix(pkg, p) }) {
					got = append(got, pkg)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("test machinery the binaries link (-want,+got):\n%s", diff)
			}
		})
	}
}
