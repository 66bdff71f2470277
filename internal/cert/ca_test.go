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

package cert

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"
)

func TestCA(t *testing.T) {
	key := types.NamespacedName{Namespace: "kubeflow-system", Name: "kubeflow-trainer-webhook-cert"}
	secret := func(data map[string][]byte) *corev1.Secret {
		return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}, Data: data}
	}
	cases := map[string]struct {
		secret  *corev1.Secret
		want    string
		wantErr string
	}{
		"the CA": {secret: secret(map[string][]byte{"ca.crt": []byte("PEM"), "tls.crt": []byte("x")}), want: "PEM"},
		"no Secret": {wantErr: "the webhook certificate Secret kubeflow-system/kubeflow-trainer-webhook-cert does not exist; " +
			"the status server's CA is copied from its ca.crt"},
		"no ca.crt": {secret: secret(map[string][]byte{"tls.crt": []byte("x")}),
			wantErr: "the webhook certificate Secret kubeflow-system/kubeflow-trainer-webhook-cert has no ca.crt; the status server's CA is copied from it"},
		"an empty ca.crt": {secret: secret(map[string][]byte{"ca.crt": []byte("\n")}),
			wantErr: "the webhook certificate Secret kubeflow-system/kubeflow-trainer-webhook-cert has no ca.crt; the status server's CA is copied from it"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := fake.NewClientBuilder()
			if tc.secret != nil {
				b = b.WithObjects(tc.secret)
			}
			got, err := (&CABundle{reader: b.Build(), key: key}).CA(context.Background())
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if diff := cmp.Diff([]string{tc.want, tc.wantErr}, []string{got, gotErr}); diff != "" {
				t.Errorf("CA() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCAChanged(t *testing.T) {
	withCA := func(ca, crt string) *corev1.Secret {
		return &corev1.Secret{Data: map[string][]byte{"ca.crt": []byte(ca), "tls.crt": []byte(crt)}}
	}
	p := CAChanged()
	got := map[string]bool{
		"create":           p.Create(event.TypedCreateEvent[*corev1.Secret]{Object: withCA("a", "1")}),
		"delete":           p.Delete(event.TypedDeleteEvent[*corev1.Secret]{Object: withCA("a", "1")}),
		"new CA":           p.Update(event.TypedUpdateEvent[*corev1.Secret]{ObjectOld: withCA("a", "1"), ObjectNew: withCA("b", "2")}),
		"same CA, new crt": p.Update(event.TypedUpdateEvent[*corev1.Secret]{ObjectOld: withCA("a", "1"), ObjectNew: withCA("a", "2")}),
	}
	want := map[string]bool{"create": true, "delete": true, "new CA": true, "same CA, new crt": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CAChanged (-want,+got):\n%s", diff)
	}
}
