// Package apply writes the objects a TrainJob needs: which write each object gets (create once,
// server-side apply, or none while it runs), whether an object found under the same name may be
// written at all, and when a write can be skipped because this exact intent is already in place.
// It is the only place that talks to the API server on behalf of the plugin pipeline.
package apply

import (
	kruntime "k8s.io/apimachinery/pkg/runtime"
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
)

// Desired is one object the controller writes for a TrainJob.
type Desired struct {
	client.Object
	Mode Mode
	// Complete, when set, fills in the parts of Object that are costly to make (a key pair, the
	// snapshot's YAML). The applier calls it only when it is about to write the object, so an
	// IfAbsent object that already exists costs nothing.
	Complete func() error
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
