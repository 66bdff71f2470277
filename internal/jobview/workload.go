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

package jobview

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Kueue's Workload is read as unstructured data: Gantry does not depend on Kueue's Go module,
// and a cluster without Kueue simply has no Workloads.
var (
	WorkloadGVK     = trainjob.WorkloadGVK
	WorkloadListGVK = trainjob.WorkloadListGVK
)

// JobUIDLabel is the label Kueue puts on a Workload with the UID of the job it stands for.
const JobUIDLabel = trainjob.WorkloadJobUIDLabel

// WorkloadFrom reads what the job view needs from a Workload.
func WorkloadFrom(u *unstructured.Unstructured) *Workload {
	wl := &Workload{Name: u.GetName(), Active: true}
	if active, found, _ := unstructured.NestedBool(u.Object, "spec", "active"); found {
		wl.Active = active
	}
	wl.ClusterQueue, _, _ = unstructured.NestedString(u.Object, "status", "admission", "clusterQueue")
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var reserved, admitted map[string]any
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		switch m["type"] {
		case "QuotaReserved":
			reserved = m
		case "Admitted":
			admitted = m
		}
	}
	wl.Admitted = admitted != nil && admitted["status"] == "True"
	// The QuotaReserved message says why a workload waits ("couldn't assign flavors ...") and
	// wins; Admitted's says which admission checks are pending once quota is reserved.
	for _, c := range []map[string]any{admitted, reserved} {
		if c != nil && c["status"] == "False" {
			if msg, ok := c["message"].(string); ok && msg != "" {
				wl.Message = msg
			}
		}
	}
	return wl
}
