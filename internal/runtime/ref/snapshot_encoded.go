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

package ref

import (
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// encodedVersions is how many runtime versions keep their encoded YAML: more than the runtimes
// a cluster submits to at once, a few hundred KiB at most.
const encodedVersions = 32

// runtimeVersion names one version of one runtime: a stored object's UID and resourceVersion
// fix its content.
type runtimeVersion struct {
	uid             types.UID
	resourceVersion string
	kind            string
}

// encodedRuntimes remembers the snapshot YAML of the last runtime versions encoded. Every
// TrainJob of a runtime version snapshots the same bytes, and encoding them was a third of the
// manager's allocations while TrainJobs were being created (make bench's heap profile).
type encodedRuntimes struct {
	mu     sync.Mutex
	yaml   map[runtimeVersion]string
	oldest []runtimeVersion // in the order added, for eviction
}

var encoded = &encodedRuntimes{yaml: map[runtimeVersion]string{}}

// runtimeYAML is rt as its snapshot holds it: without managedFields, with its kind. Runtimes
// read from the API (a UID and a resourceVersion) are encoded once per version; others (the
// command line's files) each time.
func runtimeYAML(rt client.Object) (string, error) {
	v := runtimeVersion{uid: rt.GetUID(), resourceVersion: rt.GetResourceVersion(), kind: runtimeKind(rt)}
	stored := v.uid != "" && v.resourceVersion != ""
	if stored {
		if data, ok := encoded.get(v); ok {
			return data, nil
		}
	}
	frozen, ok := rt.DeepCopyObject().(client.Object)
	if !ok {
		return "", fmt.Errorf("%T is not a client.Object", rt)
	}
	frozen.SetManagedFields(nil)
	frozen.GetObjectKind().SetGroupVersionKind(trainer.GroupVersion.WithKind(v.kind))
	data, err := yaml.Marshal(frozen)
	if err != nil {
		return "", fmt.Errorf("encoding the runtime snapshot: %w", err)
	}
	out := string(data)
	if stored {
		encoded.put(v, out)
	}
	return out, nil
}

func (e *encodedRuntimes) get(v runtimeVersion) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	data, ok := e.yaml[v]
	return data, ok
}

func (e *encodedRuntimes) put(v runtimeVersion, data string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, ok := e.yaml[v]; ok {
		return
	}
	if len(e.oldest) == encodedVersions {
		delete(e.yaml, e.oldest[0])
		e.oldest = e.oldest[1:]
	}
	e.yaml[v] = data
	e.oldest = append(e.oldest, v)
}
