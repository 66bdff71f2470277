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
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// The runtime a TrainJob references: its identity, with the schema's defaults for what
// spec.runtimeRef leaves out. Whether that kind is supported is the resolver's to say
// (internal/runtime/ref).

// RuntimeGroupKind is the group and kind tj's runtimeRef names.
func RuntimeGroupKind(tj *trainer.TrainJob) schema.GroupKind {
	return schema.GroupKind{
		Group: ptr.Deref(tj.Spec.RuntimeRef.APIGroup, trainer.DefaultRuntimeRefAPIGroup),
		Kind:  RuntimeKind(tj),
	}
}

// RuntimeKind is the kind tj's runtimeRef names, ClusterTrainingRuntime when unset.
func RuntimeKind(tj *trainer.TrainJob) string {
	if k := ptr.Deref(tj.Spec.RuntimeRef.Kind, ""); k != "" {
		return k
	}
	return trainer.DefaultRuntimeRefKind
}

// NamespacedRuntime reports whether tj references a TrainingRuntime (of its own namespace)
// rather than a cluster-scoped runtime.
func NamespacedRuntime(tj *trainer.TrainJob) bool {
	return RuntimeGroupKind(tj) == trainer.GroupVersion.WithKind(trainer.TrainingRuntimeKind).GroupKind()
}

// RuntimeKey is the name of the runtime tj references, namespaced for a TrainingRuntime.
func RuntimeKey(tj *trainer.TrainJob) types.NamespacedName {
	key := types.NamespacedName{Name: tj.Spec.RuntimeRef.Name}
	if NamespacedRuntime(tj) {
		key.Namespace = tj.Namespace
	}
	return key
}
