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

// Package apply writes the objects a TrainJob needs: which write each object gets (create once,
// server-side apply, or none while it runs), whether an object found under the same name may be
// written at all, and when a write can be skipped because this exact intent is already in place.
// It is the only place that talks to the API server on behalf of the plugin pipeline.
package apply

import (
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Mode says when the applier writes a Desired object.
type Mode int

const (
	// Always writes the object whenever what Gantry wants differs from what it last applied.
	Always Mode = iota
	// IfAbsent creates the object once and never updates it (the MPI SSH keys: rotating them
	// under running pods would break their connections; the runtime snapshot).
	IfAbsent
	// UnlessRunning leaves an existing object alone while the TrainJob runs: it is written when
	// absent, while the TrainJob is suspended, and while the existing object itself is still
	// suspended (the resume). JobSets and PodGroups use it: a running one is never changed.
	UnlessRunning
	// Shared marks an object of the namespace rather than of one TrainJob (the status server's
	// CA): it has no owner, the controller publishes it before the build (internal/statusca),
	// and Apply refuses it. Builds list it so offline renders and local runs show it.
	Shared
)

// Desired is one object the controller writes for a TrainJob.
type Desired struct {
	client.Object
	Mode Mode
	// Complete, when set, fills in the parts of Object that are costly to make (a key pair, the
	// snapshot's YAML). The applier calls it only when it is about to write the object, so an
	// IfAbsent object that already exists costs nothing.
	Complete func() error
	// Accept, when set, checks an existing object of that name, controlled by the owner, before
	// the applier takes it for the one it writes (an IfAbsent object is then left as it is).
	Accept func(existing client.Object) error
	// ExistingUID, when set, is the UID of the object the caller read under this name. The write
	// then updates that object or fails with a GoneError: it never creates another when the
	// applier's own read, later than the caller's, no longer finds it (deleted in between).
	ExistingUID types.UID
}

// ToUnstructured converts an object to what the controller applies: no status, no server-set
// metadata, and none of the empty "metadata", "status" and null "creationTimestamp" members the
// Go types write for nested templates. Without them, server-side apply does not claim fields
// Gantry never meant to set, and rendered output stays readable.
func ToUnstructured(obj client.Object) (map[string]any, error) {
	u, err := kruntime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, err
	}
	delete(u, "status")
	clean(u)
	return u, nil
}

func clean(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			clean(e)
			if isEmptyNoise(k, e) {
				delete(x, k)
			}
		}
	case []any:
		for _, e := range x {
			clean(e)
		}
	}
}

func isEmptyNoise(key string, v any) bool {
	switch key {
	case "creationTimestamp":
		return v == nil
	case "metadata", "status":
		m, ok := v.(map[string]any)
		return ok && len(m) == 0
	}
	return false
}
