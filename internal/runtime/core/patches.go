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

package core

import (
	"encoding/json"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/util/strategicpatch"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// jobSetSpecPatchMeta describes JobSetSpec for strategic merge patches: replicated jobs merge by
// name, and inside them everything merges as the core types declare (containers and env by name,
// volume mounts by mountPath, ...).
var jobSetSpecPatchMeta = func() strategicpatch.LookupPatchMeta {
	meta, err := strategicpatch.NewPatchMetaFromStruct(jobsetv1alpha2.JobSetSpec{})
	if err != nil {
		panic(fmt.Sprintf("building JobSetSpec patch metadata: %v", err))
	}
	return meta
}()

// applyRuntimePatches returns a copy of spec with the patches' template specs applied in list
// order as strategic merge patches. The runtime's order of replicated jobs is kept: the patches
// may only change jobs the runtime has.
func applyRuntimePatches(spec *jobsetv1alpha2.JobSetSpec, patches []trainer.RuntimePatch) (*jobsetv1alpha2.JobSetSpec, error) {
	var doc []byte
	for _, p := range patches {
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		for _, rj := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			if !slices.ContainsFunc(spec.ReplicatedJobs, func(r jobsetv1alpha2.ReplicatedJob) bool { return r.Name == rj.Name }) {
				return nil, fmt.Errorf("runtime patch of manager %q: replicated job %q does not exist in the runtime", p.Manager, rj.Name)
			}
		}
		if doc == nil {
			var err error
			if doc, err = json.Marshal(spec); err != nil {
				return nil, fmt.Errorf("encoding the runtime template: %w", err)
			}
		}
		patch, err := json.Marshal(p.TrainingRuntimeSpec.Template.Spec)
		if err != nil {
			return nil, fmt.Errorf("encoding runtime patch of manager %q: %w", p.Manager, err)
		}
		if doc, err = strategicpatch.StrategicMergePatchUsingLookupPatchMeta(doc, patch, jobSetSpecPatchMeta); err != nil {
			return nil, fmt.Errorf("applying runtime patch of manager %q: %w", p.Manager, err)
		}
	}
	if doc == nil {
		return spec.DeepCopy(), nil
	}
	out := &jobsetv1alpha2.JobSetSpec{}
	if err := json.Unmarshal(doc, out); err != nil {
		return nil, fmt.Errorf("decoding the patched runtime template: %w", err)
	}
	order := func(name string) int {
		return slices.IndexFunc(spec.ReplicatedJobs, func(r jobsetv1alpha2.ReplicatedJob) bool { return r.Name == name })
	}
	slices.SortStableFunc(out.ReplicatedJobs, func(a, b jobsetv1alpha2.ReplicatedJob) int { return order(a.Name) - order(b.Name) })
	return out, nil
}
