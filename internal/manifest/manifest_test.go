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
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetKind()+"/"+o.GetName())
	}
	return out
}

func TestDecode(t *testing.T) {
	cases := map[string]struct {
		data      string
		wantNames []string
		wantErr   string
	}{
		"several documents, empty ones skipped": {
			data:      "---\nkind: A\nmetadata: {name: a}\n---\n---\n# only a comment\n---\nkind: B\nmetadata: {name: b}\n",
			wantNames: []string{"A/a", "B/b"},
		},
		"JSON": {
			data:      `{"kind": "A", "metadata": {"name": "a"}}`,
			wantNames: []string{"A/a"},
		},
		"nothing": {},
		"a document without a kind": {
			data:    "kind: A\nmetadata: {name: a}\n---\nmetadata: {name: b}\n",
			wantErr: "document 2 has no kind",
		},
		"malformed YAML": {
			data:    "kind: A\n---\nkind: [B\n",
			wantErr: "document 2: ",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := Decode([]byte(tc.data))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Decode() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNames, names(objs)); diff != "" {
				t.Errorf("objects (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReadPath(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"b.yaml":       "kind: B\nmetadata: {name: b}\n",
		"a.yaml":       "kind: A\nmetadata: {name: a1}\n---\nkind: A\nmetadata: {name: a2}\n",
		".hidden.yaml": "kind: [broken",
		"notes.txt":    "not yaml",
		"bad.yml":      "kind: [broken",
	}
	for f, data := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cases := map[string]struct {
		path      string
		wantNames []string
		wantErr   string
	}{
		"a directory: its *.yaml files in name order, hidden ones skipped": {
			path:      dir,
			wantNames: []string{"A/a1", "A/a2", "B/b"},
		},
		"a file": {
			path:      filepath.Join(dir, "b.yaml"),
			wantNames: []string{"B/b"},
		},
		"errors name the file": {
			path:    filepath.Join(dir, "bad.yml"),
			wantErr: "bad.yml: document 1: ",
		},
		"a missing path": {
			path:    filepath.Join(dir, "missing"),
			wantErr: "no such file or directory",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := ReadPath(tc.path)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("ReadPath() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNames, names(objs)); diff != "" {
				t.Errorf("objects (-want,+got):\n%s", diff)
			}
		})
	}
}
