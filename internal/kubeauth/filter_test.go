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

package kubeauth

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// apiserver answers TokenReviews from tokens (token to user; others are not authenticated) and
// SubjectAccessReviews from allowed (user, verb and path), and counts the reviews.
type apiserver struct {
	tokens  map[string]authnv1.UserInfo
	allowed map[[3]string]bool
	fail    error
	reviews []string
}

func (a *apiserver) client() *fake.Clientset {
	cs := fake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		tr := action.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		a.reviews = append(a.reviews, "token "+tr.Spec.Token)
		if a.fail != nil {
			return true, nil, a.fail
		}
		u, ok := a.tokens[tr.Spec.Token]
		tr.Status = authnv1.TokenReviewStatus{Authenticated: ok, User: u}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(action k8stesting.Action) (bool, runtime.Object, error) {
		sar := action.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		nr := sar.Spec.NonResourceAttributes
		a.reviews = append(a.reviews, "access "+sar.Spec.User+" "+nr.Verb+" "+nr.Path)
		sar.Status.Allowed = a.allowed[[3]string{sar.Spec.User, nr.Verb, nr.Path}]
		return true, sar, nil
	})
	return cs
}

func TestFilter(t *testing.T) {
	server := func() *apiserver {
		return &apiserver{
			tokens: map[string]authnv1.UserInfo{
				"prom-token":  {Username: "system:serviceaccount:monitoring:prometheus"},
				"other-token": {Username: "someone"},
			},
			allowed: map[[3]string]bool{{"system:serviceaccount:monitoring:prometheus", "get", "/metrics"}: true},
		}
	}
	type request struct {
		method, path, auth string
	}
	cases := map[string]struct {
		fail     error
		requests []request
		want     []int
		// reviews are the TokenReviews and SubjectAccessReviews the apiserver received.
		reviews []string
	}{
		"an allowed scrape, then the same from the caches": {
			requests: []request{{"GET", "/metrics", "Bearer prom-token"}, {"GET", "/metrics", "Bearer prom-token"}},
			want:     []int{http.StatusOK, http.StatusOK},
			reviews:  []string{"token prom-token", "access system:serviceaccount:monitoring:prometheus get /metrics"},
		},
		"no token": {
			requests: []request{{"GET", "/metrics", ""}, {"GET", "/metrics", "Basic abc"}},
			want:     []int{http.StatusUnauthorized, http.StatusUnauthorized},
		},
		"a token the apiserver refuses, reviewed once": {
			requests: []request{{"GET", "/metrics", "Bearer forged"}, {"GET", "/metrics", "Bearer forged"}},
			want:     []int{http.StatusUnauthorized, http.StatusUnauthorized},
			reviews:  []string{"token forged"},
		},
		"a user without access": {
			requests: []request{{"GET", "/metrics", "Bearer other-token"}},
			want:     []int{http.StatusForbidden},
			reviews:  []string{"token other-token", "access someone get /metrics"},
		},
		"the verb is the method, lower-cased, and the path the request's": {
			requests: []request{{"POST", "/metrics", "Bearer prom-token"}, {"GET", "/debug", "Bearer prom-token"}},
			want:     []int{http.StatusForbidden, http.StatusForbidden},
			reviews: []string{"token prom-token", "access system:serviceaccount:monitoring:prometheus post /metrics",
				"access system:serviceaccount:monitoring:prometheus get /debug"},
		},
		"the apiserver unreachable": {
			fail:     errors.New("connection refused"),
			requests: []request{{"GET", "/metrics", "Bearer prom-token"}},
			want:     []int{http.StatusInternalServerError},
			reviews:  []string{"token prom-token"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api := server()
			api.fail = tc.fail
			h := NewReviewer(api.client()).Filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				_, _ = w.Write([]byte("metrics"))
			}))
			var got []int
			for _, r := range tc.requests {
				req := httptest.NewRequest(r.method, r.path, nil)
				if r.auth != "" {
					req.Header.Set("Authorization", r.auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				got = append(got, rec.Code)
				if rec.Code == http.StatusOK && rec.Body.String() != "metrics" {
					t.Errorf("%s %s answered %q, not the handler's", r.method, r.path, rec.Body.String())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("status codes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.reviews, api.reviews); diff != "" {
				t.Errorf("reviews (-want +got):\n%s", diff)
			}
		})
	}
}

// A flood of new tokens from one client is cut at 20 TokenReviews a second.
func TestFilterLimitsTokenReviews(t *testing.T) {
	api := &apiserver{}
	rv := NewReviewer(api.client())
	rv.limit.now = func() time.Time { return time.Unix(100, 0) } // one window
	h := rv.Filter(logr.Discard(), http.NotFoundHandler())
	codes := map[int]int{}
	for i := range 30 {
		req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		req.Header.Set("Authorization", "Bearer forged-"+string(rune('a'+i)))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		codes[rec.Code]++
	}
	want := map[int]int{http.StatusUnauthorized: 20, http.StatusTooManyRequests: 10}
	if diff := cmp.Diff(want, codes); diff != "" || len(api.reviews) != 20 {
		t.Errorf("30 new tokens in one second: %d TokenReviews; answers (-want +got):\n%s", len(api.reviews), diff)
	}
}
