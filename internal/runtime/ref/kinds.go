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

// Package ref maps a TrainJob's runtimeRef to its runtime: the kinds it may name, the object it
// names, and the snapshot ConfigMap that freezes that object for the TrainJob's life. It imports
// no part of the plugin pipeline, so readers (the command line, the web UI) stay small.
package ref

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// ErrUnsupportedRuntime is returned for a runtimeRef whose group and kind are not a runtime kind.
var ErrUnsupportedRuntime = errors.New("unsupported runtime")

// Supported runtime kinds.
var (
	TrainingRuntimeGroupKind        = trainer.GroupVersion.WithKind(trainer.TrainingRuntimeKind).GroupKind()
	ClusterTrainingRuntimeGroupKind = trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind).GroupKind()
)

// RuntimeGroupKind is the group and kind tj's runtimeRef names (trainjob.RuntimeGroupKind).
func RuntimeGroupKind(tj *trainer.TrainJob) schema.GroupKind { return trainjob.RuntimeGroupKind(tj) }

// CheckSupported returns an error wrapping ErrUnsupportedRuntime, with the message
// "unsupported runtime: <GroupKind>", when tj references something other than a runtime kind.
func CheckSupported(tj *trainer.TrainJob) error {
	gk := RuntimeGroupKind(tj)
	if gk != TrainingRuntimeGroupKind && gk != ClusterTrainingRuntimeGroupKind {
		return fmt.Errorf("%w: %s", ErrUnsupportedRuntime, gk)
	}
	return nil
}

// NewRuntimeObject returns an empty object of the kind tj references.
func NewRuntimeObject(tj *trainer.TrainJob) (client.Object, error) {
	if err := CheckSupported(tj); err != nil {
		return nil, err
	}
	if RuntimeGroupKind(tj) == TrainingRuntimeGroupKind {
		return &trainer.TrainingRuntime{}, nil
	}
	return &trainer.ClusterTrainingRuntime{}, nil
}

// RuntimeSpec returns the spec of a TrainingRuntime or ClusterTrainingRuntime.
func RuntimeSpec(rt client.Object) (*trainer.TrainingRuntimeSpec, error) {
	switch r := rt.(type) {
	case *trainer.TrainingRuntime:
		return &r.Spec, nil
	case *trainer.ClusterTrainingRuntime:
		return &r.Spec, nil
	default:
		return nil, fmt.Errorf("%T is not a runtime", rt)
	}
}
