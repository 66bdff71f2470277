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

package ui

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Another UI writing the same history between this one's read and write (two replicas, or the
// old pod's last flush during a rolling update) must not lose this one's write or be reported as
// a failure: the write is made again on the object as it now is.
func TestFlushOutlivesAnotherWriter(t *testing.T) {
	cmGR := schema.GroupResource{Resource: "configmaps"}
	cases := []struct {
		name     string
		existing bool
		race     interceptor.Funcs
	}{
		{name: "update conflicts", existing: true, race: interceptor.Funcs{
			Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
				other := obj.DeepCopyObject().(*corev1.ConfigMap)
				other.BinaryData = map[string][]byte{historyKey: []byte("the other UI's")}
				if err := c.Update(ctx, other); err != nil {
					return err
				}
				return apierrors.NewConflict(cmGR, obj.GetName(), nil)
			}}},
		{name: "create finds it created", race: interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				other := obj.DeepCopyObject().(*corev1.ConfigMap)
				other.BinaryData = map[string][]byte{historyKey: []byte("the other UI's")}
				if err := c.Create(ctx, other); err != nil {
					return err
				}
				return apierrors.NewAlreadyExists(cmGR, obj.GetName())
			}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			_ = corev1.AddToScheme(s)
			tj := report(1, ptr.To[int32](10), "loss", "2.0")
			tj.Namespace, tj.Name = "team-a", "bert"
			b := fake.NewClientBuilder().WithScheme(s)
			if tc.existing {
				b = b.WithObjects(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
					Namespace: "team-a", Name: "bert" + historySuffix, Labels: map[string]string{HistoryLabel: "true"},
					OwnerReferences: []metav1.OwnerReference{{Kind: trainer.TrainJobKind, Name: "bert", UID: tj.UID, Controller: ptr.To(true)}},
				}})
			}
			raced := false
			funcs := interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if tc.race.Create != nil && !raced {
						raced = true
						return tc.race.Create(ctx, c, obj, opts...)
					}
					return c.Create(ctx, obj, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if tc.race.Update != nil && !raced {
						raced = true
						return tc.race.Update(ctx, c, obj, opts...)
					}
					return c.Update(ctx, obj, opts...)
				},
			}
			c := b.WithInterceptorFuncs(funcs).Build()
			h := NewHistory(100)
			h.Observe(tj)
			p := newPersister(c, h, 0, nil)
			p.mark(tj)
			var reported []string
			p.flush(context.Background(), func(err error) { reported = append(reported, err.Error()) })

			if diff := cmp.Diff([]string(nil), reported); diff != "" {
				t.Errorf("reported (-want +got):\n%s", diff)
			}
			want, err := h.Encode(tj.UID)
			if err != nil {
				t.Fatal(err)
			}
			cm := &corev1.ConfigMap{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "bert" + historySuffix}, cm); err != nil {
				t.Fatal(err)
			}
			if !raced || string(cm.BinaryData[historyKey]) != string(want) {
				t.Errorf("raced %t; the ConfigMap holds %q, want this UI's history", raced, cm.BinaryData[historyKey])
			}
		})
	}
}

// A UI limited to namespaces lists the history ConfigMaps of those namespaces only, so the
// chart can grant it ConfigMaps in a Role there instead of in every namespace.
func TestRestoreListsOnlyItsNamespaces(t *testing.T) {
	cases := []struct {
		name       string
		namespaces []string
		want       []string
	}{
		{name: "every namespace", want: []string{""}},
		{name: "one namespace", namespaces: []string{"team-a"}, want: []string{"team-a"}},
		{name: "two namespaces", namespaces: []string{"team-a", "team-b"}, want: []string{"team-a", "team-b"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := runtime.NewScheme()
			_ = corev1.AddToScheme(s)
			var listed []string
			c := fake.NewClientBuilder().WithScheme(s).WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					o := &client.ListOptions{}
					o.ApplyOptions(opts)
					listed = append(listed, o.Namespace)
					return c.List(ctx, list, opts...)
				},
			}).Build()
			p := newPersister(c, NewHistory(10), 0, tc.namespaces)
			if errs := p.restore(context.Background()); len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.want, listed); diff != "" {
				t.Errorf("namespaces listed (-want +got):\n%s", diff)
			}
		})
	}
}

// historyConfigMap is the saved history of job uid, as a UI with --history=configmap leaves it.
func historyConfigMap(ns, job string, uid types.UID, data []byte) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: job + historySuffix, Labels: map[string]string{HistoryLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{Kind: trainer.TrainJobKind, Name: job, UID: uid, Controller: ptr.To(true)}}},
		BinaryData: map[string][]byte{historyKey: data},
	}
}

// A finished job whose series made room for a running job's keeps its saved curve: the UI
// must not overwrite the ConfigMap with the nothing it now holds.
func TestFlushLeavesAnEvictedHistoryAlone(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(historyConfigMap("team-a", "old", "old", []byte("saved"))).Build()
	limits := HistoryLimits{Points: 10}
	limits.Bytes = limits.seriesCost("loss")
	h := NewBoundedHistory(limits)
	old := jobReport("old", 1, true, "loss", "1")
	old.Namespace, old.Name = "team-a", "old"
	h.Observe(old)
	p := newPersister(c, h, 0, nil)
	p.mark(old)
	h.Observe(jobReport("new", 2, false, "loss", "1"))
	if !h.Note("old").Evicted {
		t.Fatal("the finished job's series was not evicted")
	}
	var reported []string
	p.flush(context.Background(), func(err error) { reported = append(reported, err.Error()) })
	cm := &corev1.ConfigMap{}
	if err := c.Get(context.Background(), client.ObjectKey{Namespace: "team-a", Name: "old" + historySuffix}, cm); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("saved", string(cm.BinaryData[historyKey])); diff != "" {
		t.Errorf("the saved history (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff([]string(nil), reported); diff != "" {
		t.Errorf("reported (-want,+got):\n%s", diff)
	}
}

// Saved histories beyond the budget are not restored, and a restart says so once, not once per
// ConfigMap.
func TestRestoreReportsTheBudgetOnce(t *testing.T) {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	limits := HistoryLimits{Points: 10}
	limits.Bytes = limits.seriesCost("loss")
	saved := NewBoundedHistory(limits)
	b := fake.NewClientBuilder().WithScheme(s)
	// Listed by name, the newest first: the older two find no room.
	for i, job := range []string{"a", "b", "c"} {
		saved.Observe(jobReport(types.UID(job), 3-i, false, "loss", "1"))
		data, err := saved.Encode(types.UID(job))
		if err != nil {
			t.Fatal(err)
		}
		saved.Forget(types.UID(job))
		b = b.WithObjects(historyConfigMap("team-a", job, types.UID(job), data))
	}
	h := NewBoundedHistory(limits)
	p := newPersister(b.Build(), h, 0, nil)
	var got []string
	for _, err := range p.restore(context.Background()) {
		got = append(got, err.Error())
	}
	want := []string{"2 saved progress histories were not restored: the progress history is at its memory budget (--history-memory)"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reported (-want,+got):\n%s", diff)
	}
	if st := h.Stats(); st.Jobs != 1 || st.DroppedMemory != 2 || h.Len("a") != 1 {
		t.Errorf("restored %d jobs (a: %d points) and dropped %d values, want job a and 2 values", st.Jobs, h.Len("a"), st.DroppedMemory)
	}
}
