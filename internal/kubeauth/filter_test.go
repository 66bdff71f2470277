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
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
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

// Sign-in under a flood of bad tokens: failed reviews put their address in a penalty box, valid
// tokens consume no per-address budget, a flood from one address cannot spend the whole budget,
// so a valid new token from another address still gets its review, and a token known valid gets
// its review even from a boxed address; the apiserver sees at most 200 reviews a second
// (issue 34, item 5).
func TestFilterLimitsTokenReviews(t *testing.T) {
	type burst struct {
		addr, token string
		n           int // distinct tokens token-0, token-1, ... when > 1
		// expire drops the token from the answer cache first, as a minute does.
		expire bool
	}
	cases := map[string]struct {
		bursts []burst
		want   map[int]int
		// reviews is how many TokenReviews the apiserver received.
		reviews int
	}{
		"20 bad tokens, then a valid new token from the same address": {
			bursts:  []burst{{addr: "10.0.0.1", token: "forged", n: 20}, {addr: "10.0.0.1", token: "prom-token", n: 1}},
			want:    map[int]int{http.StatusUnauthorized: 20, http.StatusOK: 1},
			reviews: 21,
		},
		"a flood from one address is cut at half the budget, and another address still signs in": {
			bursts:  []burst{{addr: "10.0.0.1", token: "forged", n: 130}, {addr: "10.0.0.2", token: "prom-token", n: 1}},
			want:    map[int]int{http.StatusUnauthorized: 100, http.StatusTooManyRequests: 30, http.StatusOK: 1},
			reviews: 101,
		},
		"new tokens from many addresses are cut at three quarters of the budget": {
			bursts: []burst{{addr: "10.0.0.1", token: "a", n: 10}, {addr: "10.0.0.2", token: "b", n: 10}, {addr: "10.0.0.3", token: "c", n: 10},
				{addr: "10.0.0.4", token: "d", n: 10}, {addr: "10.0.0.5", token: "e", n: 10}, {addr: "10.0.0.6", token: "f", n: 10},
				{addr: "10.0.0.7", token: "g", n: 10}, {addr: "10.0.0.8", token: "h", n: 10}, {addr: "10.0.0.9", token: "i", n: 10},
				{addr: "10.0.0.10", token: "j", n: 10}, {addr: "10.0.0.11", token: "k", n: 10}, {addr: "10.0.0.12", token: "l", n: 10},
				{addr: "10.0.0.13", token: "m", n: 10}, {addr: "10.0.0.14", token: "n", n: 10}, {addr: "10.0.0.15", token: "o", n: 10},
				{addr: "10.0.0.16", token: "p", n: 10}},
			want:    map[int]int{http.StatusUnauthorized: 150, http.StatusTooManyRequests: 10},
			reviews: 150,
		},
		"valid new tokens behind one address (an ingress) spend no address budget, up to 200 a second in all": {
			bursts:  []burst{{addr: "10.0.0.1", token: "valid", n: 250}},
			want:    map[int]int{http.StatusOK: 200, http.StatusTooManyRequests: 50},
			reviews: 200,
		},
		"a boxed address: a new token waits, a token known valid whose answer expired is reviewed": {
			bursts: []burst{{addr: "10.0.0.1", token: "prom-token", n: 1}, {addr: "10.0.0.1", token: "forged", n: 110},
				{addr: "10.0.0.1", token: "valid", n: 1}, {addr: "10.0.0.1", token: "prom-token", n: 1, expire: true}},
			want:    map[int]int{http.StatusOK: 2, http.StatusUnauthorized: 100, http.StatusTooManyRequests: 11},
			reviews: 102,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			api := &apiserver{
				tokens:  map[string]authnv1.UserInfo{"prom-token": {Username: "prometheus"}},
				allowed: map[[3]string]bool{{"prometheus", "get", "/metrics"}: true},
			}
			for i := range 300 {
				api.tokens[fmt.Sprintf("valid-%d", i)] = authnv1.UserInfo{Username: "prometheus"}
			}
			api.tokens["valid"] = authnv1.UserInfo{Username: "prometheus"}
			rv := NewReviewer(api.client())
			rv.limit.now = func() time.Time { return time.Unix(100, 0) } // one window
			h := rv.Filter(logr.Discard(), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {}))
			codes := map[int]int{}
			for _, b := range tc.bursts {
				for i := range b.n {
					token := b.token
					if b.n > 1 {
						token = fmt.Sprintf("%s-%d", b.token, i)
					}
					if b.expire {
						rv.tokens.lru.Remove(token)
					}
					req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
					req.RemoteAddr = b.addr + ":4000"
					req.Header.Set("Authorization", "Bearer "+token)
					rec := httptest.NewRecorder()
					h.ServeHTTP(rec, req)
					codes[rec.Code]++
				}
			}
			if diff := cmp.Diff(tc.want, codes); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
			reviews := 0
			for _, r := range api.reviews {
				if strings.HasPrefix(r, "token ") {
					reviews++
				}
			}
			if reviews != tc.reviews {
				t.Errorf("%d TokenReviews, want %d", reviews, tc.reviews)
			}
		})
	}
}
