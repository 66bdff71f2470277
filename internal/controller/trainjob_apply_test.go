package controller

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
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

func TestApplyObjectsWritesCreateOnceObjectsWithCreate(t *testing.T) {
	snapshot := func(data string) *corev1.ConfigMap {
		return &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-runtime-snapshot"},
			Data:       map[string]string{"runtime": data},
		}
	}
	cases := map[string]struct {
		// stored is in the apiserver before the reconcile; cached says whether the cache has it.
		stored    *corev1.ConfigMap
		cached    bool
		wantCalls []string
		wantData  string
	}{
		"absent: created, not applied": {
			wantCalls: []string{"create job-runtime-snapshot"},
			wantData:  "new",
		},
		"in the cache: not written": {
			stored:   snapshot("old"),
			cached:   true,
			wantData: "old",
		},
		"created by an earlier reconcile the cache has not seen yet: kept as it is": {
			stored:    snapshot("old"),
			wantCalls: []string{"create job-runtime-snapshot"},
			wantData:  "old",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var calls []string
			b := fake.NewClientBuilder()
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			stored := b.Build()
			c := interceptor.NewClient(stored, interceptor.Funcs{
				Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					if !tc.cached {
						return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
					}
					return c.Get(ctx, key, obj, opts...)
				},
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					calls = append(calls, "create "+obj.GetName())
					return c.Create(ctx, obj, opts...)
				},
				Apply: func(context.Context, client.WithWatch, apiruntime.ApplyConfiguration, ...client.ApplyOption) error {
					calls = append(calls, "apply")
					return nil
				},
			})
			r := &TrainJobReconciler{client: c, clock: clocktesting.NewFakePassiveClock(time.Now())}
			tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job"}}
			obj := snapshot("")
			objs := []runtime.Object{{Object: obj, Mode: runtime.ApplyIfAbsent, Complete: func() error {
				obj.Data = map[string]string{"runtime": "new"}
				return nil
			}}}
			if err := r.applyObjects(context.Background(), tj, objs); err != nil {
				t.Fatalf("applyObjects: %v", err)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("writes (-want,+got):\n%s", diff)
			}
			got := &corev1.ConfigMap{}
			if err := stored.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantData, got.Data["runtime"]); diff != "" {
				t.Errorf("stored snapshot (-want,+got):\n%s", diff)
			}
		})
	}
}
