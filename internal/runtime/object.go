package runtime

import "sigs.k8s.io/controller-runtime/pkg/client"

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
