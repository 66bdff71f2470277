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

package apply

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/cached"
)

// Suspended reports whether obj has spec.suspend set (a JobSet held back by Kueue or by its
// TrainJob). Objects without the field, such as PodGroups, are never suspended.
//
// This is the one statement of the running-object rule: an UnlessRunning object is written only
// while it or its TrainJob is suspended, so the controller's cache drops the Job templates of
// JobSets that are not suspended, since nothing compares or writes them (package cached).
func Suspended(obj client.Object) bool {
	if js, ok := obj.(*jobsetv1alpha2.JobSet); ok {
		return cached.Suspended(js)
	}
	if u, ok := obj.(*unstructured.Unstructured); ok {
		s, found, _ := unstructured.NestedBool(u.Object, "spec", "suspend")
		return found && s
	}
	u, err := ToUnstructured(obj)
	if err != nil {
		return false
	}
	s, found, _ := unstructured.NestedBool(u, "spec", "suspend")
	return found && s
}

// Writable reports whether an existing object of mode may be written now: UnlessRunning objects
// only while the TrainJob (tjSuspended) or the object itself is suspended.
func Writable(mode Mode, tjSuspended bool, existing client.Object) bool {
	switch mode {
	case IfAbsent:
		return false
	case UnlessRunning:
		return tjSuspended || Suspended(existing)
	default:
		return true
	}
}
