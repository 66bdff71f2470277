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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

var owner = &trainer.TrainJob{
	TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
	ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: "job-uid"},
}

func ownerRefs() []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(owner, trainer.GroupVersion.WithKind(trainer.TrainJobKind))}
}

func configMap(name string, data map[string]string, refs []metav1.OwnerReference) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name, OwnerReferences: refs},
		Data:       data,
	}
}

// harness is an apiserver (stored) behind a cache that sees it or not (cached), recording every
// write the applier sends.
type harness struct {
	stored client.WithWatch
	cached bool
	calls  []string
}

func (h *harness) applier(t *testing.T) *Applier {
	c := interceptor.NewClient(h.stored, interceptor.Funcs{
		Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if !h.cached {
				return apierrors.NewNotFound(corev1.Resource("configmaps"), key.Name)
			}
			return c.Get(ctx, key, obj, opts...)
		},
		Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
			h.calls = append(h.calls, "create "+obj.GetName())
			return c.Create(ctx, obj, opts...)
		},
		Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
			h.calls = append(h.calls, "update "+obj.GetName())
			return c.Update(ctx, obj, opts...)
		},
		Apply: func(ctx context.Context, c client.WithWatch, obj apiruntime.ApplyConfiguration, opts ...client.ApplyOption) error {
			h.calls = append(h.calls, "apply")
			return c.Apply(ctx, obj, opts...)
		},
	})
	a, err := NewApplier(c, h.stored, "trainer")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestApplierCreatesOnce(t *testing.T) {
	snapshot := func(data string) *corev1.ConfigMap {
		return configMap("job-runtime-snapshot", map[string]string{"runtime": data}, ownerRefs())
	}
	cases := map[string]struct {
		// stored is in the apiserver before the reconcile; cached says whether the cache has it.
		stored    *corev1.ConfigMap
		cached    bool
		wantCalls []string
		wantData  string
		wantErr   string
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
		"someone else's, which the cache cannot see: refused, not used": {
			stored:    configMap("job-runtime-snapshot", map[string]string{"runtime": "theirs"}, nil),
			wantCalls: []string{"create job-runtime-snapshot"},
			wantData:  "theirs",
			wantErr:   "ConfigMap ns/job-runtime-snapshot exists and is not owned by this TrainJob (job): Gantry does not adopt objects it did not create; delete or rename it",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			h := &harness{stored: b.Build(), cached: tc.cached}
			obj := snapshot("")
			objs := []Desired{{Object: obj, Mode: IfAbsent, Complete: func() error {
				obj.Data = map[string]string{"runtime": "new"}
				return nil
			}}}
			_, err := h.applier(t).Apply(context.Background(), owner, false, objs)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("Apply() error (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCalls, h.calls); diff != "" {
				t.Errorf("writes (-want,+got):\n%s", diff)
			}
			got := &corev1.ConfigMap{}
			if err := h.stored.Get(context.Background(), client.ObjectKeyFromObject(obj), got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantData, got.Data["runtime"]); diff != "" {
				t.Errorf("stored snapshot (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestApplierWritesOnlyChanges: a known intent is not written again; a changed one is, including
// one that drops a key, which a "does the object hold every desired field" check would miss.
func TestApplierWritesOnlyChanges(t *testing.T) {
	h := &harness{stored: fake.NewClientBuilder().Build(), cached: true}
	a := h.applier(t)
	write := func(data map[string]string) {
		t.Helper()
		objs := []Desired{{Object: configMap("job-hostfile", data, ownerRefs()), Mode: Always}}
		if _, err := a.Apply(context.Background(), owner, false, objs); err != nil {
			t.Fatal(err)
		}
	}
	write(map[string]string{"hostfile": "a", "extra": "x"})
	write(map[string]string{"hostfile": "a", "extra": "x"})
	write(map[string]string{"hostfile": "a"})
	if diff := cmp.Diff([]string{"create job-hostfile", "update job-hostfile"}, h.calls); diff != "" {
		t.Errorf("writes (-want,+got):\n%s", diff)
	}
	got := &corev1.ConfigMap{}
	if err := h.stored.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job-hostfile"}, got); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"hostfile": "a"}, got.Data); diff != "" {
		t.Errorf("stored data (-want,+got):\n%s", diff)
	}
}

// TestApplierAfterRestart: with nothing remembered, a ConfigMap whose content is exactly the
// intent is not written, and one with a key Gantry no longer writes is.
func TestApplierAfterRestart(t *testing.T) {
	cases := map[string]struct {
		stored    map[string]string
		wantCalls []string
	}{
		"the same content":      {stored: map[string]string{"hostfile": "a"}},
		"a key too many":        {stored: map[string]string{"hostfile": "a", "old": "x"}, wantCalls: []string{"update job-hostfile"}},
		"another value":         {stored: map[string]string{"hostfile": "b"}, wantCalls: []string{"update job-hostfile"}},
		"someone else's object": {stored: nil},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			refs := ownerRefs()
			if tc.stored == nil {
				refs = nil
			}
			existing := configMap("job-hostfile", tc.stored, refs)
			existing.Labels = map[string]string{"server": "added"}
			h := &harness{stored: fake.NewClientBuilder().WithObjects(existing).Build(), cached: true}
			objs := []Desired{{Object: configMap("job-hostfile", map[string]string{"hostfile": "a"}, ownerRefs()), Mode: Always}}
			_, err := h.applier(t).Apply(context.Background(), owner, false, objs)
			var notOwned *NotOwnedError
			if (tc.stored == nil) != (err != nil && asNotOwned(err, &notOwned)) {
				t.Fatalf("Apply() error = %v", err)
			}
			if diff := cmp.Diff(tc.wantCalls, h.calls); diff != "" {
				t.Errorf("writes (-want,+got):\n%s", diff)
			}
		})
	}
}

func asNotOwned(err error, target **NotOwnedError) bool {
	e, ok := err.(*NotOwnedError) //nolint:errorlint // Apply returns it unwrapped
	*target = e
	return ok
}

func TestWritable(t *testing.T) {
	suspendedJobSet := &corev1.Pod{} // a kind without spec.suspend is never suspended
	cases := map[string]struct {
		mode        Mode
		tjSuspended bool
		want        bool
	}{
		"always":                         {mode: Always, want: true},
		"if absent, present":             {mode: IfAbsent},
		"unless running, running":        {mode: UnlessRunning},
		"unless running, owner suspends": {mode: UnlessRunning, tjSuspended: true, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, Writable(tc.mode, tc.tjSuspended, suspendedJobSet)); diff != "" {
				t.Errorf("Writable (-want,+got):\n%s", diff)
			}
		})
	}
	_ = ptr.To(true)
}

// TestApplierUpdatesOnlyTheObjectTheCallerRead: with ExistingUID, an object the applier's cache
// does not hold is applied with that UID, which the API server refuses (409) when no object of
// that UID exists (modelled here as the API server's patch handler does it), and Apply then says
// it is gone instead of having created it; an object only the cache lags behind is updated.
func TestApplierUpdatesOnlyTheObjectTheCallerRead(t *testing.T) {
	cases := map[string]struct {
		stored      *corev1.Service
		existingUID types.UID
		wantApplied []string
		wantCreated int
		wantGone    bool
		wantStored  bool
	}{
		"read by the caller, deleted since: not created again": {
			existingUID: "uid-1",
			wantApplied: []string{"uid=uid-1"},
			wantGone:    true,
		},
		"read by the caller, not in the cache yet: updated": {
			stored:      service("uid-1"),
			existingUID: "uid-1",
			wantApplied: []string{"uid=uid-1"},
			wantStored:  true,
		},
		"read by nobody: created": {
			wantApplied: []string{"uid="},
			wantCreated: 1,
			wantStored:  true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.stored != nil {
				b = b.WithObjects(tc.stored)
			}
			stored := b.Build()
			var applied []string
			c := interceptor.NewClient(stored, interceptor.Funcs{
				Get: func(_ context.Context, _ client.WithWatch, key client.ObjectKey, _ client.Object, _ ...client.GetOption) error {
					return apierrors.NewNotFound(corev1.Resource("services"), key.Name) // the cache has seen the deletion
				},
				Apply: func(ctx context.Context, c client.WithWatch, obj apiruntime.ApplyConfiguration, opts ...client.ApplyOption) error {
					uid := uidOf(t, obj)
					applied = append(applied, "uid="+uid)
					err := c.Get(ctx, client.ObjectKey{Namespace: "ns", Name: "job"}, &corev1.Service{})
					if uid != "" && apierrors.IsNotFound(err) {
						return apierrors.NewConflict(corev1.Resource("services"), "job",
							fmt.Errorf("uid mismatch: the provided object specified uid %s, and no existing object was found", uid))
					}
					return c.Apply(ctx, obj, opts...)
				},
			})
			a, err := NewApplier(c, stored, "trainer")
			if err != nil {
				t.Fatal(err)
			}
			desired := service("")
			res, err := a.Apply(context.Background(), owner, false, []Desired{{Object: desired, Mode: UnlessRunning, ExistingUID: tc.existingUID}})
			gone, isGone := errors.AsType[*GoneError](err)
			if isGone != tc.wantGone || err != nil && !isGone {
				t.Fatalf("Apply() error = %v, want gone: %t", err, tc.wantGone)
			}
			if isGone && (gone.Kind != "Service" || gone.UID != tc.existingUID || !apierrors.IsConflict(err)) {
				t.Errorf("GoneError = %+v, want the Service of uid %s, still a conflict", gone, tc.existingUID)
			}
			if diff := cmp.Diff(tc.wantApplied, applied); diff != "" {
				t.Errorf("applies (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCreated, len(res.Created)); diff != "" {
				t.Errorf("created (-want,+got):\n%s", diff)
			}
			getErr := stored.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "job"}, &corev1.Service{})
			if diff := cmp.Diff(tc.wantStored, getErr == nil); diff != "" {
				t.Errorf("stored (-want,+got):\n%s", diff)
			}
		})
	}
}

func service(uid types.UID) *corev1.Service {
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job", UID: uid, OwnerReferences: ownerRefs()},
		Spec:       corev1.ServiceSpec{ClusterIP: corev1.ClusterIPNone},
	}
}

// uidOf is the metadata.uid an apply request carries.
func uidOf(t *testing.T, obj apiruntime.ApplyConfiguration) string {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var u struct {
		Metadata struct {
			UID string `json:"uid"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(data, &u); err != nil {
		t.Fatal(err)
	}
	return u.Metadata.UID
}
