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

package manifest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// limit is the one CheckDocument applies in these tests.
const limit = 3 << 20

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestCheckDocument(t *testing.T) {
	cases := map[string]struct {
		doc     string
		wantErr string
	}{
		"a plain document":                 {doc: "kind: A\nmetadata: {name: a}\n"},
		"a star in a string is no alias":   {doc: "hosts: ['*.example.com', \"*/5 * * * *\"]\n"},
		"aliases that expand a little":     {doc: "a: &x [1, 2, 3]\nb: *x\nc: *x\n"},
		"an alias to a long string, twice": {doc: "a: &x " + strings.Repeat("y", 1<<19) + "\nb: *x\nc: *x\n"},
		"an alias to a long string, four times": {
			doc:     "a: &x " + strings.Repeat("y", 1<<20) + "\nb: [*x, *x, *x]\n",
			wantErr: "its YAML aliases expand it past the 3 MiB limit",
		},
		"nested aliases past the limit": {
			doc:     "a: &a [" + strings.Repeat("x", 10_000) + "]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: [*c, *c, *c, *c]\n",
			wantErr: "its YAML aliases expand it past the 3 MiB limit",
		},
		"malformed, left to the decoder": {doc: "a: *undefined\n"},
		"over the size limit": {
			doc:     "a: " + strings.Repeat("y", limit),
			wantErr: "3.0 MiB, over the 3 MiB limit",
		},
		"not UTF-8 on line 3": {
			doc:     "a: b\nc: d\ne: \"\xe2\x28\xa1\"\n",
			wantErr: "line 3: invalid UTF-8 (byte 0xe2): YAML and JSON must be UTF-8",
		},
		"UTF-16, left to the parser": {doc: "\xff\xfea\x00:\x00 \x00b\x00\n\x00"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.wantErr, errString(CheckDocument([]byte(tc.doc), limit))); diff != "" {
				t.Errorf("CheckDocument() (-want,+got):\n%s", diff)
			}
		})
	}
}
