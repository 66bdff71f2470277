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

package statusserver

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestTokenBoundToTrainJob: a token projected into a pod of a deleted TrainJob is still signed,
// unexpired and for the same audience when a TrainJob of the same name is created again; it must
// not update the new one. Tokens issued before the TrainJob existed are refused.
func TestTokenBoundToTrainJob(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	issuer := newFakeIssuer(t, utiltesting.JWK(key, "rsa"))
	created := time.Unix(1_800_000_000, 0)
	now := created.Add(10 * time.Minute)
	v := issuer.verifier(t, now)

	s := apiruntime.NewScheme()
	if err := trainer.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	tj.UID = "uid-of-the-new-trainjob"
	tj.CreationTimestamp = metav1.NewTime(created)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(tj).WithStatusSubresource(tj).Build()

	report := `{"trainerStatus":{"progressPercentage":42,"lastUpdatedTime":"2025-01-23T10:30:45Z"}}`
	cases := map[string]struct {
		issuedAt    time.Time
		wantCode    int
		wantMessage string
		wantWritten bool
	}{
		"issued for the old TrainJob, before the new one was created": {
			issuedAt: created.Add(-50 * time.Minute), wantCode: http.StatusForbidden,
			wantMessage: `the token was issued before TrainJob ns/job (uid uid-of-the-new-trainjob) was created: it belongs to an earlier TrainJob of that name`,
		},
		"issued a second before the new one was created": {
			issuedAt: created.Add(-time.Second), wantCode: http.StatusForbidden,
			wantMessage: `the token was issued before TrainJob ns/job (uid uid-of-the-new-trainjob) was created: it belongs to an earlier TrainJob of that name`,
		},
		"issued in the second the new one was created": {issuedAt: created, wantCode: http.StatusOK, wantWritten: true},
		"issued for the new TrainJob":                  {issuedAt: created.Add(time.Minute), wantCode: http.StatusOK, wantWritten: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if err := c.Status().Patch(t.Context(), tj, client.RawPatch("application/merge-patch+json",
				[]byte(`{"status":{"trainerStatus":null}}`))); err != nil {
				t.Fatal(err)
			}
			token, err := utiltesting.SignJWT(key, "rsa", map[string]any{
				"iss": issuer.issuer, "aud": []string{"trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status"},
				"sub": "system:serviceaccount:ns:default", "iat": tc.issuedAt.Unix(), "nbf": tc.issuedAt.Unix(),
				"exp":           tc.issuedAt.Add(time.Hour).Unix(),
				"kubernetes.io": map[string]any{"namespace": "ns", "pod": map[string]any{"name": "job-node-0-0-abcde", "uid": "p"}},
			})
			if err != nil {
				t.Fatal(err)
			}
			req := httptest.NewRequest(http.MethodPost, route, strings.NewReader(report))
			req.Header.Set("Authorization", "Bearer "+token)
			rec := httptest.NewRecorder()
			Handler(v, &ClientApplier{Client: c}, logr.Discard()).ServeHTTP(rec, req)

			if diff := cmp.Diff(tc.wantCode, rec.Code); diff != "" {
				t.Errorf("code (-want,+got):\n%s\nbody: %s", diff, rec.Body)
			}
			if tc.wantMessage != "" {
				got := metav1.Status{}
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("the error body is not a Status: %v: %s", err, rec.Body)
				}
				if diff := cmp.Diff(tc.wantMessage, got.Message); diff != "" {
					t.Errorf("message (-want,+got):\n%s", diff)
				}
			}
			cur := &trainer.TrainJob{}
			if err := c.Get(t.Context(), client.ObjectKeyFromObject(tj), cur); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantWritten, cur.Status.TrainerStatus != nil); diff != "" {
				t.Errorf("trainerStatus written (-want,+got):\n%s", diff)
			}
		})
	}
}
