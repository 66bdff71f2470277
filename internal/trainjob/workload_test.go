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

package trainjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestWorkloadFrom(t *testing.T) {
	cond := func(typ, status, msg string) any {
		return map[string]any{"type": typ, "status": status, "message": msg}
	}
	check := func(name, state, msg string) any {
		return map[string]any{"name": name, "state": state, "message": msg}
	}
	cases := map[string]struct {
		spec   map[string]any
		status map[string]any
		want   Workload
	}{
		"new": {want: Workload{Name: "wl", Active: true}},
		"no quota: QuotaReserved's message": {
			status: map[string]any{"conditions": []any{cond("QuotaReserved", "False", "couldn't assign flavors to pod set node")}},
			want:   Workload{Name: "wl", Active: true, Message: "couldn't assign flavors to pod set node"},
		},
		"admitted": {
			status: map[string]any{"admission": map[string]any{"clusterQueue": "cq"},
				"conditions": []any{cond("QuotaReserved", "True", ""), cond("Admitted", "True", "")}},
			want: Workload{Name: "wl", Active: true, Admitted: true, ClusterQueue: "cq"},
		},
		"stopped": {spec: map[string]any{"active": false}, want: Workload{Name: "wl"}},
		// MultiKueue on a manager: quota reserved, no Admitted condition while the check waits
		// for a worker with room.
		"quota reserved, an admission check pending: the check says why": {
			status: map[string]any{"admission": map[string]any{"clusterQueue": "cq"},
				"conditions":      []any{cond("QuotaReserved", "True", "Quota reserved in ClusterQueue cq")},
				"admissionChecks": []any{check("multikueue", "Pending", "no worker has room"), check("other", "Ready", "fine")}},
			want: Workload{Name: "wl", Active: true, ClusterQueue: "cq", Message: `quota reserved in cluster queue "cq"; waiting for admission check multikueue: no worker has room`},
		},
		"an admission check pending without a message": {
			status: map[string]any{"admission": map[string]any{"clusterQueue": "cq"},
				"conditions":      []any{cond("QuotaReserved", "True", "")},
				"admissionChecks": []any{check("multikueue", "Pending", "")}},
			want: Workload{Name: "wl", Active: true, ClusterQueue: "cq", Message: `quota reserved in cluster queue "cq"; waiting for admission check multikueue`},
		},
		"Admitted False wins over a check": {
			status: map[string]any{"conditions": []any{cond("QuotaReserved", "True", ""), cond("Admitted", "False", "The workload has failed admission checks")},
				"admissionChecks": []any{check("multikueue", "Retry", "worker lost")}},
			want: Workload{Name: "wl", Active: true, Message: "The workload has failed admission checks"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{}}
			u.SetName("wl")
			if tc.spec != nil {
				u.Object["spec"] = tc.spec
			}
			if tc.status != nil {
				u.Object["status"] = tc.status
			}
			if diff := cmp.Diff(tc.want, *WorkloadFrom(u)); diff != "" {
				t.Errorf("WorkloadFrom (-want +got):\n%s", diff)
			}
		})
	}
}
