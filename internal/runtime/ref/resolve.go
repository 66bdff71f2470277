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
	"context"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Source says where ResolveRuntime found a runtime.
type Source int

const (
	// FromSnapshot is the runtime frozen in the TrainJob's snapshot ConfigMap.
	FromSnapshot Source = iota
	// FromLive is the TrainingRuntime or ClusterTrainingRuntime object itself.
	FromLive
)

// Lookup says where ResolveRuntime may look.
type Lookup int

const (
	// SnapshotThenLive reads the snapshot, and the live runtime only when there is none: what a
	// TrainJob that exists builds and is validated against, so editing or deleting its runtime
	// changes neither.
	SnapshotThenLive Lookup = iota
	// LiveOnly reads the live runtime: a TrainJob being created has no snapshot yet (one found
	// under its name belongs to an earlier TrainJob).
	LiveOnly
)

// RuntimeNotFoundError is returned when the live runtime a TrainJob references does not exist.
type RuntimeNotFoundError struct {
	// Kind is TrainingRuntime or ClusterTrainingRuntime; Namespace is empty for the latter.
	Kind, Namespace, Name string
}

func (e *RuntimeNotFoundError) Error() string {
	return fmt.Sprintf("%s %q specified in TrainJob is not found", e.Kind, e.Name)
}

// IsRuntimeNotFound reports whether err is a RuntimeNotFoundError.
func IsRuntimeNotFound(err error) bool {
	var nf *RuntimeNotFoundError
	return errors.As(err, &nf)
}

// ResolveRuntime returns the runtime tj references, read through r, and where it came from: the
// one place that maps a runtimeRef to an object. The snapshot is checked (DecodeSnapshot) before
// it is trusted.
func ResolveRuntime(ctx context.Context, r client.Reader, tj *trainer.TrainJob, lookup Lookup) (client.Object, Source, error) {
	if lookup == SnapshotThenLive {
		cm := &corev1.ConfigMap{}
		err := r.Get(ctx, client.ObjectKey{Namespace: tj.Namespace, Name: SnapshotName(tj)}, cm)
		if err == nil {
			rt, err := DecodeSnapshot(cm, tj)
			return rt, FromSnapshot, err
		}
		if !apierrors.IsNotFound(err) {
			return nil, FromSnapshot, fmt.Errorf("reading the runtime snapshot: %w", err)
		}
	}
	rt, err := NewRuntimeObject(tj)
	if err != nil {
		return nil, FromLive, err
	}
	key := RuntimeKey(tj)
	if err := r.Get(ctx, key, rt); err != nil {
		kind := RuntimeGroupKind(tj).Kind
		if apierrors.IsNotFound(err) {
			return nil, FromLive, &RuntimeNotFoundError{Kind: kind, Namespace: key.Namespace, Name: key.Name}
		}
		return nil, FromLive, fmt.Errorf("reading %s %q: %w", kind, key.Name, err)
	}
	return rt, FromLive, nil
}

// RuntimeKey is the key of the runtime tj references: namespaced for a TrainingRuntime.
func RuntimeKey(tj *trainer.TrainJob) client.ObjectKey { return trainjob.RuntimeKey(tj) }
