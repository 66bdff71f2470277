package controller

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/gantry-ml/gantry/internal/runtime"
)

func TestUpToDate(t *testing.T) {
	desired := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "hostfile", Namespace: "ns", Labels: map[string]string{"a": "1"}},
		Data:       map[string]string{"hostfile": "node-0 slots=1\n"},
	}
	cases := map[string]struct {
		existing *corev1.ConfigMap
		want     bool
	}{
		"the same, as the cache returns it (no type, server fields added)": {
			existing: &corev1.ConfigMap{
				ObjectMeta: metav1.ObjectMeta{Name: "hostfile", Namespace: "ns", Labels: map[string]string{"a": "1", "b": "2"},
					ResourceVersion: "7", UID: "u"},
				Data: map[string]string{"hostfile": "node-0 slots=1\n"},
			},
			want: true,
		},
		"different data": {
			existing: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hostfile", Namespace: "ns", Labels: map[string]string{"a": "1"}},
				Data: map[string]string{"hostfile": "node-0 slots=2\n"}},
		},
		"a label missing": {
			existing: &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "hostfile", Namespace: "ns"},
				Data: map[string]string{"hostfile": "node-0 slots=1\n"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			u, err := runtime.ToUnstructured(desired)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, upToDate(u, tc.existing)); diff != "" {
				t.Errorf("upToDate (-want,+got):\n%s", diff)
			}
		})
	}
}
