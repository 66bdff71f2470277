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

package render

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestMarshalDocument(t *testing.T) {
	for _, tc := range []struct {
		name string
		obj  map[string]any
		want string
	}{
		{"plain strings stay YAML", map[string]any{"value": "hello"}, "value: hello\n"},
		{"DEL, which the YAML emitter refuses, makes the document JSON", map[string]any{"value": "a\x7fb"},
			"{\n  \"value\": \"a\\u007fb\"\n}\n"},
		{"and so do C1 controls; NEL is escaped, not read as a line break", map[string]any{"value": "a\u0085b\u0086\u2028"},
			"{\n  \"value\": \"a\\u0085b\\u0086\\u2028\"\n}\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MarshalDocument(tc.obj)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, string(got)); diff != "" {
				t.Errorf("document (-want,+got):\n%s", diff)
			}
			// Either way it reads back as YAML, to the same object.
			var back map[string]any
			if err := yaml.Unmarshal(got, &back); err != nil {
				t.Fatalf("reading it back: %v", err)
			}
			if diff := cmp.Diff(tc.obj, back); diff != "" {
				t.Errorf("read back (-want,+got):\n%s", diff)
			}
		})
	}
}
