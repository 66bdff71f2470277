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
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestToUnstructured(t *testing.T) {
	cm := &corev1.Pod{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{Name: "p"},
		Spec:       corev1.PodSpec{Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}},
	}
	got, err := ToUnstructured(cm)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "p"},
		// Empty objects that mean something, like emptyDir, stay.
		"spec": map[string]any{"containers": nil, "volumes": []any{map[string]any{"name": "scratch", "emptyDir": map[string]any{}}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ToUnstructured (-want,+got):\n%s", diff)
	}
}

func TestSubset(t *testing.T) {
	got := map[string]any{"a": int64(1), "b": []any{"x", map[string]any{"c": true, "d": "extra"}}, "e": "server"}
	cases := map[string]struct {
		want any
		ok   bool
	}{
		"fewer fields":             {want: map[string]any{"a": float64(1), "b": []any{"x", map[string]any{"c": true}}}, ok: true},
		"a different value":        {want: map[string]any{"a": int64(2)}},
		"a missing field":          {want: map[string]any{"z": "1"}},
		"a list of another length": {want: map[string]any{"b": []any{"x"}}},
		"another type":             {want: map[string]any{"a": "1"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.ok, Subset(tc.want, got)); diff != "" {
				t.Errorf("Subset (-want,+got):\n%s", diff)
			}
		})
	}
}
