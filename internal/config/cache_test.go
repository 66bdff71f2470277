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

package config

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
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
	cases := map[string]struct {
		in, want any
	}{
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
			got, err := trim(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("trim (-want,+got):\n%s", diff)
			}
		})
	}
}
