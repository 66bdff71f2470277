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
	"maps"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

func TestTrim(t *testing.T) {
	jobSet := func(suspend *bool, template batchv1.JobTemplateSpec, managed []metav1.ManagedFieldsEntry) *jobsetv1alpha2.JobSet {
		return &jobsetv1alpha2.JobSet{
			ObjectMeta: metav1.ObjectMeta{Name: "job", Labels: map[string]string{"a": "b"}, ManagedFields: managed},
			Spec: jobsetv1alpha2.JobSetSpec{
				Suspend:        suspend,
				ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{Name: "node", Replicas: 1, Template: template}},
			},
			Status: jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}},
		}
	}
	labels := map[string]string{"trainer.kubeflow.org/trainjob-ancestor-step": "trainer"}
	template := batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels, Annotations: map[string]string{"x": "y"}},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4), BackoffLimit: ptr.To[int32](0),
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "pytorch"}}}}}}
	// What an elastic TrainJob's scale reads of a running JobSet's Job template.
	sizeOnly := batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
		Spec: batchv1.JobSpec{Parallelism: ptr.To[int32](4), Completions: ptr.To[int32](4)}}
	managed := []metav1.ManagedFieldsEntry{{Manager: "trainer", Operation: metav1.ManagedFieldsOperationApply}}
	finished := func(condition string, suspend *bool) *jobsetv1alpha2.JobSet {
		js := jobSet(suspend, template, managed)
		js.Status.Conditions = []metav1.Condition{{Type: condition, Status: metav1.ConditionTrue}}
		return js
	}
	// What is left of a finished JobSet: metadata, status, and the node job's size for the scale.
	compact := func(condition string) *jobsetv1alpha2.JobSet {
		js := finished(condition, nil)
		js.ManagedFields = nil
		js.Spec.ReplicatedJobs = nil
		js.Annotations = map[string]string{NodeParallelismAnnotation: "4"}
		return js
	}
	suspendedDone := finished(string(jobsetv1alpha2.JobSetCompleted), ptr.To(true))
	suspendedDone.ManagedFields = nil
	cases := map[string]struct {
		in, want any
	}{
		"completed: replicated jobs dropped, the node job's parallelism kept": {
			in:   finished(string(jobsetv1alpha2.JobSetCompleted), nil),
			want: compact(string(jobsetv1alpha2.JobSetCompleted)),
		},
		"failed: as completed": {
			in:   finished(string(jobsetv1alpha2.JobSetFailed), nil),
			want: compact(string(jobsetv1alpha2.JobSetFailed)),
		},
		"finished but suspended: templates kept for the up-to-date check": {
			in:   finished(string(jobsetv1alpha2.JobSetCompleted), ptr.To(true)),
			want: suspendedDone,
		},
		"running: templates but their labels and size, and managedFields dropped, the rest kept": {
			in:   jobSet(nil, template, managed),
			want: jobSet(nil, sizeOnly, nil),
		},
		"resumed: as running": {
			in:   jobSet(ptr.To(false), template, managed),
			want: jobSet(ptr.To(false), sizeOnly, nil),
		},
		"suspended: templates kept for the up-to-date check": {
			in:   jobSet(ptr.To(true), template, managed),
			want: jobSet(ptr.To(true), template, nil),
		},
		"kubectl's last applied configuration dropped, other annotations kept": {
			in: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Annotations: map[string]string{
				corev1.LastAppliedConfigAnnotation: `{"apiVersion":"v1","kind":"ConfigMap"}`, "note": "kept"}}},
			want: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Annotations: map[string]string{"note": "kept"}}},
		},
		"only kubectl's last applied configuration: no annotations left": {
			in:   &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", Annotations: map[string]string{corev1.LastAppliedConfigAnnotation: "{}"}}},
			want: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}},
		},
		"another kind: managedFields dropped": {
			in:   &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm", ManagedFields: managed}},
			want: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "cm"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := Transform(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Transform (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestTrimSharesSnapshotBodies: every TrainJob of one runtime version freezes the same runtime, so
// the cache keeps one copy of a snapshot's data, not one per TrainJob; other ConfigMaps keep their own.
func TestTrimSharesSnapshotBodies(t *testing.T) {
	snapshot := func(name, body string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name + ref.SnapshotSuffix},
			Data: map[string]string{ref.SnapshotKey: strings.Clone(body), ref.SnapshotKnobsKey: strings.Clone(`{"a":"b"}`)}}
	}
	other := func(name, body string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{ref.SnapshotKey: strings.Clone(body)}}
	}
	cases := map[string]struct {
		a, b       *corev1.ConfigMap
		wantShared bool
	}{
		"two snapshots of one runtime":      {a: snapshot("a", "kind: ClusterTrainingRuntime"), b: snapshot("b", "kind: ClusterTrainingRuntime"), wantShared: true},
		"snapshots of two runtimes":         {a: snapshot("a", "kind: ClusterTrainingRuntime"), b: snapshot("b", "kind: TrainingRuntime")},
		"ConfigMaps that are not snapshots": {a: other("a", "kind: ClusterTrainingRuntime"), b: other("b", "kind: ClusterTrainingRuntime")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			want := []map[string]string{maps.Clone(tc.a.Data), maps.Clone(tc.b.Data)}
			var got []*corev1.ConfigMap
			for _, cm := range []*corev1.ConfigMap{tc.a, tc.b} {
				out, err := Transform(cm)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, out.(*corev1.ConfigMap))
			}
			if diff := cmp.Diff(want, []map[string]string{got[0].Data, got[1].Data}); diff != "" {
				t.Errorf("data (-want,+got):\n%s", diff)
			}
			shared := unsafe.StringData(got[0].Data[ref.SnapshotKey]) == unsafe.StringData(got[1].Data[ref.SnapshotKey])
			if shared != tc.wantShared {
				t.Errorf("the two bodies share memory: %v, want %v", shared, tc.wantShared)
			}
		})
	}
}

// TestInternBounded: the table of shared values empties itself when full, so runtimes that change
// all the time cannot grow it; values already shared stay valid.
func TestInternBounded(t *testing.T) {
	table := newInternTable(2)
	first := table.intern(strings.Clone("one"))
	table.intern("two")
	table.intern("three") // full: starts over
	if got := len(table.values); got > 2 {
		t.Fatalf("the table holds %d values, want at most 2", got)
	}
	again := table.intern(strings.Clone("one"))
	if diff := cmp.Diff("one", again); diff != "" {
		t.Errorf("intern (-want,+got):\n%s", diff)
	}
	if first != "one" {
		t.Errorf("a value shared before the table emptied changed: %q", first)
	}
}
