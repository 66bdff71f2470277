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

package statusca

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func TestPublish(t *testing.T) {
	cm := func(mutate func(*corev1.ConfigMap)) *corev1.ConfigMap {
		c := trainjobstatus.CAConfigMap("ns", ca)
		c.TypeMeta = metav1.TypeMeta{}
		mutate(c)
		return c
	}
	cases := map[string]struct {
		existing    *corev1.ConfigMap
		refuse      error
		wantWrites  []string
		wantProblem string
		wantErr     bool
	}{
		"absent: created": {wantWrites: []string{"create"}},
		"current: nothing written": {
			existing: cm(func(*corev1.ConfigMap) {}),
		},
		"another CA (a rotation, an edit): replaced": {
			existing:   cm(func(c *corev1.ConfigMap) { c.Data["ca.crt"] = "old" }),
			wantWrites: []string{"update"},
		},
		"someone else's, unlabelled, with more keys: taken over": {
			existing: cm(func(c *corev1.ConfigMap) {
				c.Labels = nil
				c.Data["other"] = "key"
				c.BinaryData = map[string][]byte{"bin": {1}}
			}),
			wantWrites: []string{"update"},
		},
		"someone else's, immutable: deleted and created again": {
			existing:   cm(func(c *corev1.ConfigMap) { c.Data["ca.crt"] = "theirs"; c.Immutable = ptr.To(true) }),
			wantWrites: []string{"delete", "create"},
		},
		"refused for good (a quota): a problem, not an error": {
			refuse:      apierrors.NewForbidden(schema.GroupResource{Resource: "configmaps"}, trainjobstatus.CAConfigMapName, errors.New("exceeded quota")),
			wantWrites:  []string{"create"},
			wantProblem: `publishing the status server CA to ConfigMap ns/gantry-status-server-ca was refused: configmaps "gantry-status-server-ca" is forbidden: exceeded quota`,
		},
		"a transient error: retried": {
			refuse:     apierrors.NewServiceUnavailable("down"),
			wantWrites: []string{"create"},
			wantErr:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.existing != nil {
				b = b.WithObjects(tc.existing)
			}
			var mu sync.Mutex
			var writes []string
			record := func(verb string) error {
				mu.Lock()
				defer mu.Unlock()
				writes = append(writes, verb)
				return tc.refuse
			}
			c := b.WithInterceptorFuncs(interceptor.Funcs{
				Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
					if err := record("create"); err != nil {
						return err
					}
					return c.Create(ctx, obj, opts...)
				},
				Update: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.UpdateOption) error {
					if err := record("update"); err != nil {
						return err
					}
					return c.Update(ctx, obj, opts...)
				},
				Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
					if err := record("delete"); err != nil {
						return err
					}
					return c.Delete(ctx, obj, opts...)
				},
			}).Build()
			p := &Publisher{reader: c, client: c, apiReader: c, published: map[string]string{}, locks: map[string]*sync.Mutex{}}
			problem, err := p.Publish(t.Context(), "ns", ca)
			if (err != nil) != tc.wantErr {
				t.Fatalf("Publish() error = %v, want error %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantProblem, problem); diff != "" {
				t.Errorf("Publish() problem (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWrites, writes); diff != "" {
				t.Errorf("writes (-want,+got):\n%s", diff)
			}
			if tc.refuse != nil {
				return
			}
			got := &corev1.ConfigMap{}
			if err := c.Get(t.Context(), client.ObjectKey{Namespace: "ns", Name: trainjobstatus.CAConfigMapName}, got); err != nil {
				t.Fatal(err)
			}
			if !current(got, ca) {
				t.Errorf("the ConfigMap holds %v with labels %v, want only the CA and Gantry's label", got.Data, got.Labels)
			}
			// Published: the next build in the namespace writes nothing.
			writes = nil
			if _, err := p.Publish(t.Context(), "ns", ca); err != nil || len(writes) != 0 {
				t.Errorf("publishing again: error %v, writes %v; want none", err, writes)
			}
		})
	}
}

// Events after which the namespace must publish again pass and forget it; Gantry's own writes,
// which leave the ConfigMap current, do not.
func TestDisturbed(t *testing.T) {
	current := trainjobstatus.CAConfigMap("ns", ca)
	edited := current.DeepCopy()
	edited.Data["ca.crt"] = "theirs"
	unlabelled := current.DeepCopy()
	unlabelled.Labels = nil
	cases := map[string]struct {
		pass func(predicate.TypedPredicate[*corev1.ConfigMap]) bool
		want bool
	}{
		"created current": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Create(event.TypedCreateEvent[*corev1.ConfigMap]{Object: current})
		}},
		"updated to current": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Update(event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: edited, ObjectNew: current})
		}},
		"created by another": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Create(event.TypedCreateEvent[*corev1.ConfigMap]{Object: edited})
		}, want: true},
		"its CA edited": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Update(event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: current, ObjectNew: edited})
		}, want: true},
		"its label removed": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Update(event.TypedUpdateEvent[*corev1.ConfigMap]{ObjectOld: current, ObjectNew: unlabelled})
		}, want: true},
		"deleted": {pass: func(p predicate.TypedPredicate[*corev1.ConfigMap]) bool {
			return p.Delete(event.TypedDeleteEvent[*corev1.ConfigMap]{Object: current})
		}, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			p := &Publisher{published: map[string]string{"ns": ca}, locks: map[string]*sync.Mutex{},
				ca: func(context.Context) (string, error) { return ca, nil }}
			got := tc.pass(p.Disturbed())
			_, remembered := p.published["ns"]
			if diff := cmp.Diff([]bool{tc.want, !tc.want}, []bool{got, remembered}); diff != "" {
				t.Errorf("passed, still remembered (-want,+got):\n%s", diff)
			}
		})
	}
}
