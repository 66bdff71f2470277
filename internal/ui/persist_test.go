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
