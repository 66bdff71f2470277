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

package differential

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Mutator changes one edge field of a case; arg picks among its values.
type Mutator struct {
	Name   string
	Values int
	Apply  func(c *Case, arg int)
}

func set(obj map[string]any, value any, path ...string) {
	if value == nil {
		unstructured.RemoveNestedField(obj, path...)
		return
	}
	_ = unstructured.SetNestedField(obj, value, path...)
}

// jobs returns the runtime's replicated jobs, and the function that stores them back.
func jobs(c *Case) ([]any, func([]any)) {
	list, _, _ := unstructured.NestedSlice(c.Runtime, "spec", "template", "spec", "replicatedJobs")
	return list, func(l []any) { set(c.Runtime, l, "spec", "template", "spec", "replicatedJobs") }
}

// onJob applies f to the arg-th replicated job (modulo their number), if there is one.
func onJob(c *Case, arg int, f func(job map[string]any)) {
	list, store := jobs(c)
	if len(list) == 0 {
		return
	}
	job, ok := list[arg%len(list)].(map[string]any)
	if !ok {
		return
	}
	f(job)
	store(list)
}

func int64s(values ...int64) []any {
	out := make([]any, len(values))
	for i, v := range values {
		out[i] = v
	}
	return out
}

// pick returns values[arg], or nil (remove the field) past the end.
func pick(values []any, arg int) any {
	if arg < len(values) {
		return values[arg]
	}
	return nil
}

var uris = []any{"", "hf://tatsu-lab/alpaca", "s3://bucket/key", "not-a-uri", "hf://", "pvc://claim/path"}

// Mutators are the edge fields the issue names: name lengths, counts, patches, reserved env,
// storage URIs, and the runtime shapes (jobs, containers, dependsOn, policies, gangs) that
// initializers and validation depend on.
var Mutators = []Mutator{
	{"name length", 9, func(c *Case, arg int) {
		n := []int{1, 33, 34, 47, 48, 49, 62, 63, 64}[arg]
		set(c.TrainJob, "a"+strings.Repeat("b", n-1), "metadata", "name")
	}},
	{"trainer numNodes", 8, func(c *Case, arg int) {
		set(c.TrainJob, pick(int64s(-1, 0, 1, 2, 11, 100001, 2147483647), arg), "spec", "trainer", "numNodes")
	}},
	{"trainer numProcPerNode", 5, func(c *Case, arg int) {
		set(c.TrainJob, pick(int64s(-1, 0, 1, 8), arg), "spec", "trainer", "numProcPerNode")
	}},
	{"runtime patches", 4, func(c *Case, arg int) {
		n := []int{0, 1, 16, 17}[arg]
		patches := make([]any, n)
		for i := range patches {
			patches[i] = map[string]any{"manager": fmt.Sprintf("example.com/m%d", i)}
		}
		set(c.TrainJob, patches, "spec", "runtimePatches")
	}},
	{"trainer env", 8, func(c *Case, arg int) {
		name := []string{"PET_NNODES", "PET_MASTER_ADDR", "PET_NODE_RANK", "OMPI_MCA_orte_keep_fqdn_hostnames",
			"JAX_NUM_PROCESSES", "DMLC_TRACKER_URI", "FLUX_VIEW_IMAGE", "MY_VAR"}[arg]
		set(c.TrainJob, []any{map[string]any{"name": name, "value": "1"}}, "spec", "trainer", "env")
	}},
	{"dataset storageUri", len(uris) + 2, func(c *Case, arg int) {
		switch {
		case arg < len(uris):
			set(c.TrainJob, uris[arg], "spec", "initializer", "dataset", "storageUri")
		case arg == len(uris):
			set(c.TrainJob, map[string]any{}, "spec", "initializer", "dataset")
		default:
			set(c.TrainJob, nil, "spec", "initializer", "dataset")
		}
	}},
	{"model storageUri", len(uris) + 2, func(c *Case, arg int) {
		switch {
		case arg < len(uris):
			set(c.TrainJob, uris[arg], "spec", "initializer", "model", "storageUri")
		case arg == len(uris):
			set(c.TrainJob, map[string]any{}, "spec", "initializer", "model")
		default:
			set(c.TrainJob, nil, "spec", "initializer", "model")
		}
	}},
	{"job replicas", 12, func(c *Case, arg int) {
		onJob(c, arg/4, func(job map[string]any) { set(job, int64s(-1, 0, 1, 2)[arg%4], "replicas") })
	}},
	{"job parallelism", 12, func(c *Case, arg int) {
		onJob(c, arg/4, func(job map[string]any) {
			set(job, int64s(-1, 0, 3, 1<<20)[arg%4], "template", "spec", "parallelism")
		})
	}},
	{"job renamed", 6, func(c *Case, arg int) {
		onJob(c, arg/2, func(job map[string]any) { set(job, []string{"fetch", "node"}[arg%2], "name") })
	}},
	{"job removed", 3, func(c *Case, arg int) {
		list, store := jobs(c)
		if len(list) > 0 {
			i := arg % len(list)
			store(append(list[:i:i], list[i+1:]...))
		}
	}},
	{"container renamed", 3, func(c *Case, arg int) {
		onJob(c, arg, func(job map[string]any) {
			containers, _, _ := unstructured.NestedSlice(job, "template", "spec", "template", "spec", "containers")
			if len(containers) > 0 {
				containers[0].(map[string]any)["name"] = "loader"
				set(job, containers, "template", "spec", "template", "spec", "containers")
			}
		})
	}},
	{"ancestor label removed", 3, func(c *Case, arg int) {
		onJob(c, arg, func(job map[string]any) {
			set(job, nil, "template", "metadata", "labels", "trainer.kubeflow.org/trainjob-ancestor-step")
		})
	}},
	{"dependsOn", 6, func(c *Case, arg int) {
		onJob(c, arg/2, func(job map[string]any) {
			target := []string{"missing", "node"}[arg%2]
			set(job, []any{map[string]any{"name": target, "status": "Complete"}}, "dependsOn")
		})
	}},
	{"runtime numNodes", 5, func(c *Case, arg int) {
		set(c.Runtime, pick(int64s(-1, 0, 1, 100001), arg), "spec", "mlPolicy", "numNodes")
	}},
	{"ML policy", 7, func(c *Case, arg int) {
		numNodes, found, _ := unstructured.NestedFieldCopy(c.Runtime, "spec", "mlPolicy", "numNodes")
		policy := map[string]any{}
		if found {
			policy["numNodes"] = numNodes
		}
		switch arg {
		case 0:
			policy["torch"] = map[string]any{}
		case 1:
			policy["mpi"] = map[string]any{"numProcPerNode": int64(0)}
		case 2:
			policy["mpi"] = map[string]any{"runLauncherAsNode": true}
		case 3:
			policy["jax"] = map[string]any{}
		case 4:
			policy["xgboost"] = map[string]any{}
		case 5:
			policy["flux"] = map[string]any{"numProcPerNode": int64(1)}
		}
		set(c.Runtime, policy, "spec", "mlPolicy")
	}},
	// What Kubeflow Trainer's schema admits and Gantry's webhook refuses: no spec, no template,
	// and runtime patch names too long for a replicated job or a container.
	{"spec removed", 3, func(c *Case, arg int) {
		switch arg {
		case 0:
			set(c.TrainJob, nil, "spec")
		case 1:
			set(c.Runtime, nil, "spec")
		default:
			set(c.Runtime, nil, "spec", "template")
		}
	}},
	{"runtime patch names", 7, func(c *Case, arg int) {
		job, kind, container := "node", "", ""
		switch arg {
		case 0, 1, 2:
			job = "j" + strings.Repeat("a", []int{62, 63, 253}[arg])
		case 3, 4:
			kind, container = []string{"containers", "initContainers"}[arg-3], "c"+strings.Repeat("a", 63)
		case 5:
			kind, container = "containers", "c"+strings.Repeat("a", 253)
		default:
			kind, container = "containers", "c"+strings.Repeat("a", 62)
		}
		rj := map[string]any{"name": job}
		if kind != "" {
			rj["template"] = map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				kind: []any{map[string]any{"name": container}},
			}}}}
		}
		set(c.TrainJob, []any{map[string]any{"manager": "example.com/names", "trainingRuntimeSpec": map[string]any{
			"template": map[string]any{"spec": map[string]any{"replicatedJobs": []any{rj}}},
		}}}, "spec", "runtimePatches")
	}},
	{"gang", 4, func(c *Case, arg int) {
		policy := map[string]any{}
		if arg&1 != 0 {
			policy["coscheduling"] = map[string]any{"scheduleTimeoutSeconds": int64(60)}
		}
		if arg&2 != 0 {
			policy["volcano"] = map[string]any{}
		}
		if len(policy) == 0 {
			set(c.Runtime, nil, "spec", "podGroupPolicy")
			return
		}
		set(c.Runtime, policy, "spec", "podGroupPolicy")
	}},
}

// Mutations reads a mutation list from fuzz bytes: pairs of (mutator, value).
func Mutations(data []byte) [][2]int {
	var out [][2]int
	for i := 0; i+1 < len(data) && len(out) < 6; i += 2 {
		m := int(data[i]) % len(Mutators)
		out = append(out, [2]int{m, int(data[i+1]) % Mutators[m].Values})
	}
	return out
}
