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

package memlimit

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSoft(t *testing.T) {
	cases := map[string]struct {
		content string
		want    int64
	}{
		"cgroup v2, 128Mi":        {content: "134217728\n", want: 120795955},
		"cgroup v2, no limit":     {content: "max\n"},
		"cgroup v1, no limit":     {content: "9223372036854771712\n"},
		"empty":                   {content: ""},
		"zero (not a real limit)": {content: "0"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, soft(tc.content)); diff != "" {
				t.Errorf("soft limit (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFromCgroupLeavesGOMEMLIMITAlone(t *testing.T) {
	t.Setenv("GOMEMLIMIT", "64MiB")
	if got := FromCgroup(); got != 0 {
		t.Errorf("FromCgroup set %d with GOMEMLIMIT in the environment", got)
	}
}
