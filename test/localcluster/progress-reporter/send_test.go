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

package main

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// fakeAPI issues numbered tokens and serves one CA ConfigMap, recording the token requests.
type fakeAPI struct {
	ca       string
	requests []authenticationv1.TokenRequestSpec
}

func (f *fakeAPI) CreateToken(_ context.Context, ns, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	f.requests = append(f.requests, tr.Spec)
	out := tr.DeepCopy()
	out.Status.Token = fmt.Sprintf("token-%d-%s-%s", len(f.requests), ns, sa)
	return out, nil
}

func (f *fakeAPI) GetConfigMap(_ context.Context, ns, name string) (*corev1.ConfigMap, error) {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"ca.crt": f.ca}}, nil
}

// posted is one request as the status server saw it.
type posted struct {
	Authorization string
	Body          trainer.UpdateTrainJobStatusRequest
}

// TestSenderPosts: reports carry the pod's token (requested once, bound to the pod, for the
// projection's audience and lifetime) and verify the server with the ConfigMap's CA; a 429's
// Retry-After is returned, a 403 drops the token so the next report asks for a new one.
func TestSenderPosts(t *testing.T) {
	var got []posted
	answers := []int{http.StatusOK, http.StatusTooManyRequests, http.StatusForbidden, http.StatusOK}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		data, _ := io.ReadAll(r.Body)
		p := posted{Authorization: r.Header.Get("Authorization")}
		if err := json.Unmarshal(data, &p.Body); err != nil {
			t.Errorf("body %s: %v", data, err)
		}
		code := answers[len(got)]
		got = append(got, p)
		if code == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "3")
		}
		w.WriteHeader(code)
	}))
	defer srv.Close()
	api := &fakeAPI{ca: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))}
	s := newSender(api)
	tg, err := targetOf(statusPod("job", "job-node-0-0", "0", time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	tg.url = srv.URL + "/status"
	status := Point{Percent: 10, ETASeconds: 9, Loss: 1.5}.Status(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	var results []result
	for range answers {
		res, err := s.send(context.Background(), tg, status)
		if err != nil {
			t.Fatal(err)
		}
		res.body = ""
		results = append(results, res)
	}
	wantResults := []result{{code: 200}, {code: 429, retryAfter: 3 * time.Second}, {code: 403}, {code: 200}}
	if diff := cmp.Diff(wantResults, results, cmp.AllowUnexported(result{})); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
	body := trainer.UpdateTrainJobStatusRequest{TrainerStatus: status}
	want := []posted{
		{Authorization: "Bearer token-1-ns-trainer-sa", Body: body}, {Authorization: "Bearer token-1-ns-trainer-sa", Body: body},
		{Authorization: "Bearer token-1-ns-trainer-sa", Body: body}, {Authorization: "Bearer token-2-ns-trainer-sa", Body: body},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	spec := authenticationv1.TokenRequestSpec{
		Audiences: []string{tg.audience}, ExpirationSeconds: &tg.expirationSeconds,
		BoundObjectRef: &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: "job-node-0-0", UID: "job-node-0-0-uid"},
	}
	if diff := cmp.Diff([]authenticationv1.TokenRequestSpec{spec, spec}, api.requests); diff != "" {
		t.Errorf("token requests (-want +got):\n%s", diff)
	}
}
