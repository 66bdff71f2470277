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
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Workload is what the job view needs from Kueue's Workload for a TrainJob.
type Workload struct {
	Name string `json:"name"`
	// ClusterQueue is set once Kueue reserved quota for the job.
	ClusterQueue string `json:"clusterQueue,omitempty"`
	// Admitted is Kueue's Admitted condition.
	Admitted bool `json:"admitted"`
	// Active is false when someone stopped the workload (kubectl kueue stop).
	Active bool `json:"active"`
	// Message explains why the workload waits, from its QuotaReserved or Admitted condition.
	Message string `json:"message,omitempty"`
}

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
	if wl.Message == "" && !wl.Admitted && reserved != nil && reserved["status"] == "True" {
		wl.Message = pendingCheck(u, wl.ClusterQueue)
	}
	return wl
}

// pendingCheck says which admission check holds a workload whose quota is reserved (MultiKueue
// on a manager waits so for a worker with room, with no Admitted condition to say it), "" if none.
func pendingCheck(u *unstructured.Unstructured, clusterQueue string) string {
	checks, _, _ := unstructured.NestedSlice(u.Object, "status", "admissionChecks")
	for _, c := range checks {
		m, ok := c.(map[string]any)
		if !ok || m["state"] == "Ready" {
			continue
		}
		why := fmt.Sprintf("quota reserved in cluster queue %q; waiting for admission check %v", clusterQueue, m["name"])
		if msg, _ := m["message"].(string); msg != "" {
			why += ": " + msg
		}
		return why
	}
	return ""
}
