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

package localcluster

import (
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"
)

func TestAuditFlagsAndPolicy(t *testing.T) {
	for _, audit := range []bool{false, true} {
		c := &Cluster{StateDir: t.TempDir(), Settings: DefaultSettings()}
		c.Settings.Audit = audit
		comp := c.apiserverComponent()
		got := slices.Contains(comp.args, "--audit-log-path")
		if diff := cmp.Diff(audit, got); diff != "" {
			t.Errorf("audit %v: --audit-log-path among the apiserver's flags (-want,+got):\n%s", audit, diff)
		}
		if !audit {
			continue
		}
		if err := comp.prepare(t.Context()); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(c.path("config", "audit-policy.yaml"))
		if err != nil {
			t.Fatal(err)
		}
		var policy struct {
			Kind  string           `json:"kind"`
			Rules []map[string]any `json:"rules"`
		}
		if err := yaml.Unmarshal(data, &policy); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff([]any{"create", "update", "patch", "delete"}, policy.Rules[0]["verbs"]); diff != "" {
			t.Errorf("audited verbs (-want,+got):\n%s", diff)
		}
	}
}
