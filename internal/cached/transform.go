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

package cached

import (
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

var stripManagedFields = cache.TransformStripManagedFields()

// Transform is the cache transform of every kind: it drops managedFields and the copy of the
// whole object kubectl apply keeps in an annotation, which nothing reads (a TrainJob or runtime
// applied with kubectl would otherwise be cached twice over); JobSets keep what the JobSet
// contract says (see the package doc), and runtime snapshots share their data (shareSnapshot).
func Transform(in any) (any, error) {
	if obj, ok := in.(metav1.Object); ok {
		if a := obj.GetAnnotations(); a != nil {
			if _, ok := a[corev1.LastAppliedConfigAnnotation]; ok {
				delete(a, corev1.LastAppliedConfigAnnotation)
				if len(a) == 0 {
					obj.SetAnnotations(nil)
				}
			}
		}
	}
	switch obj := in.(type) {
	case *jobsetv1alpha2.JobSet:
		return trimJobSet(obj), nil
	case *corev1.ConfigMap:
		shareSnapshot(obj)
	}
	return stripManagedFields(in)
}

// internTable hands out one copy of equal strings. It is bounded: when full it starts over, so
// values shared before stay shared and valid, and nothing grows without limit.
type internTable struct {
	mu     sync.Mutex
	max    int
	values map[string]string
}

func newInternTable(max int) *internTable {
	return &internTable{max: max, values: map[string]string{}}
}

func (t *internTable) intern(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if v, ok := t.values[s]; ok {
		return v
	}
	if len(t.values) >= t.max {
		clear(t.values)
	}
	t.values[s] = s
	return s
}

// snapshotData shares the data of runtime snapshots: every TrainJob of one runtime version
// freezes the same runtime, about 1.2 KiB of YAML that the cache would otherwise hold once per
// TrainJob, finished ones included. A platform has tens of runtimes, each edited now and then.
var snapshotData = newInternTable(256)

// shareSnapshot points a snapshot ConfigMap's data at the shared copies.
func shareSnapshot(cm *corev1.ConfigMap) {
	if !strings.HasSuffix(cm.Name, ref.SnapshotSuffix) {
		return
	}
	for k, v := range cm.Data {
		cm.Data[k] = snapshotData.intern(v)
	}
}
