package runtime

import (
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ApplyMode says when the controller writes an Object.
type ApplyMode int

const (
	// ApplyAlways writes the object on every build.
	ApplyAlways ApplyMode = iota
	// ApplyIfAbsent creates the object once and never updates it (the MPI SSH keys: rotating them
	// under running pods would break their connections).
	ApplyIfAbsent
	// ApplyUnlessRunning leaves an existing object alone while the TrainJob runs: it is written
	// when absent, while the TrainJob is suspended, and while the existing object itself is still
	// suspended (the resume). JobSets and PodGroups use it: a running one is never changed.
	ApplyUnlessRunning
)

// Object is one object the controller applies for a TrainJob.
type Object struct {
	client.Object
	Mode ApplyMode
	// Complete, when set, fills in the parts of Object that are costly to make (e.g. a key pair).
	// The controller calls it only when it is about to write the object, so an ApplyIfAbsent
	// object that already exists costs nothing.
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
