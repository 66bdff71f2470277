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
	stdcmp "cmp"
	"context"
	"io"
	"io/fs"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8sfake "k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	gscheme "github.com/gantry-ml/gantry/internal/scheme"
)

// readerCache is a cache.Cache that answers reads from a client and has no informers: the
// pages' reads without an API server.
type readerCache struct {
	client.Reader
	cache.Informers
}

// newTestServer serves objs the way the informers would.
func newTestServer(t *testing.T, objs ...client.Object) *Server {
	t.Helper()
	s, err := gscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).Build()
	store := &Store{cache: readerCache{Reader: c}, direct: c, History: NewHistory(0), Changes: NewBroker(), warn: func(error) {}}
	srv, err := NewServer(store, stubLogs{})
	if err != nil {
		t.Fatal(err)
	}
	srv.Metrics = true // --metrics' default
	return srv
}

// withAccess is srv behind a, as Run serves token and header modes.
func withAccess(srv *Server, a *Access) http.Handler {
	srv.Access = a
	return a.Wrap(srv.Handler())
}

// stubLogs serves one line of log and no events.
type stubLogs struct{}

func (stubLogs) Logs(context.Context, string, string, string, *corev1.PodLogOptions) (io.ReadCloser, error) {
	return io.NopCloser(strings.NewReader("epoch 1\n")), nil
}

func (stubLogs) Events(context.Context, string) ([]corev1.Event, error) { return nil, nil }

// fixture is a job with progress in team-a, a ClusterTrainingRuntime and a TrainingRuntime in
// team-a and one in team-b.
func fixture() []client.Object {
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "bert", UID: "bert-uid"},
		Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}}}
	tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](40),
		Metrics: []trainer.Metric{{Name: "loss", Value: "0.5"}}, LastUpdatedTime: metav1.NewTime(t0)}
	return []client.Object{tj,
		&trainer.ClusterTrainingRuntime{ObjectMeta: metav1.ObjectMeta{Name: "torch"}},
		&trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "team-a-tuned"}},
		&trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: "team-b", Name: "team-b-secret-project"}},
	}
}

// fakeReviews authenticates tokens "alice" and "bob" as those users and answers access reviews
// with allow.
func fakeReviews(allow func(authzv1.SubjectAccessReviewSpec) bool) *k8sfake.Clientset {
	cs := k8sfake.NewClientset()
	cs.PrependReactor("create", "tokenreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		tr := a.(k8stesting.CreateAction).GetObject().(*authnv1.TokenReview)
		if tr.Spec.Token == "alice" || tr.Spec.Token == "bob" {
			tr.Status = authnv1.TokenReviewStatus{Authenticated: true, User: authnv1.UserInfo{Username: tr.Spec.Token, Groups: []string{"system:authenticated"}}}
		}
		return true, tr, nil
	})
	cs.PrependReactor("create", "subjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		sar := a.(k8stesting.CreateAction).GetObject().(*authzv1.SubjectAccessReview)
		sar.Status.Allowed = allow(sar.Spec)
		return true, sar, nil
	})
	return cs
}

// aliceOfTeamA may read the jobs and runtimes of team-a, the ClusterTrainingRuntimes and the
// metrics, and nothing else. Bob may read every namespace's jobs but only team-a's runtimes, and
// no ClusterTrainingRuntime.
func aliceOfTeamA(spec authzv1.SubjectAccessReviewSpec) bool {
	if na := spec.NonResourceAttributes; na != nil {
		return spec.User == "alice" && na.Path == "/metrics" && na.Verb == "get"
	}
	ra := spec.ResourceAttributes
	switch spec.User {
	case "alice":
		return ra.Resource == "clustertrainingruntimes" || ra.Namespace == "team-a"
	case "bob":
		return ra.Resource == "trainjobs" || (ra.Resource == "trainingruntimes" && ra.Namespace == "team-a")
	}
	return false
}

// securityHeaders are what every answer must carry, whatever its route, status or sign-in mode.
var wantSecurityHeaders = map[string]string{
	"Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
		"frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
	"X-Content-Type-Options": "nosniff",
	"Referrer-Policy":        "no-referrer",
}

// serveEachMode serves the fixture in each sign-in mode, as Run composes them, and returns their
// URLs and a cookie jar signed in to the kubeconfig mode's.
func serveEachMode(t *testing.T) (map[string]string, http.CookieJar) {
	t.Helper()
	local, err := NewLocalAuth()
	if err != nil {
		t.Fatal(err)
	}
	modes := map[string]http.Handler{
		"kubeconfig": local.Wrap(newTestServer(t, fixture()...).Handler()),
		"token":      withAccess(newTestServer(t, fixture()...), NewAccess(fakeReviews(aliceOfTeamA), "", "")),
		"header":     withAccess(newTestServer(t, fixture()...), headerAccess(t)),
	}
	urls := map[string]string{}
	for mode, h := range modes {
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		urls[mode] = ts.URL
	}
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := (&http.Client{Jar: jar}).Get(urls["kubeconfig"] + "/jobs?token=" + local.Token())
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return urls, jar
}

// TestEveryResponseCarriesTheSecurityHeaders: pages, error pages, static files, live streams,
// log downloads and each sign-in mode's refusals and pages carry a strict Content-Security-Policy
// (scripts, styles and connections from the UI only, no framing), nosniff and no referrer.
func TestEveryResponseCarriesTheSecurityHeaders(t *testing.T) {
	urls, jar := serveEachMode(t)
	cases := []struct {
		mode, method, path, token string
		signedIn                  bool
		wantCode                  int
	}{
		{mode: "kubeconfig", path: "/", signedIn: true, wantCode: http.StatusFound},
		{mode: "kubeconfig", path: "/jobs", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/jobs?state=Bogus", signedIn: true, wantCode: http.StatusBadRequest},
		{mode: "kubeconfig", path: "/jobs/team-a/bert?tab=progress", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/jobs/team-a/absent", signedIn: true, wantCode: http.StatusNotFound},
		{mode: "kubeconfig", path: "/runtimes", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/live/jobs", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/live/jobs/team-a/bert?tab=progress", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/logs/team-a/bert?follow=0", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/logs/team-a/bert?download=1&follow=0", signedIn: true, wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/static/app.js", wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/static/absent.js", wantCode: http.StatusNotFound},
		{mode: "kubeconfig", path: "/healthz", wantCode: http.StatusOK},
		{mode: "kubeconfig", path: "/absent", signedIn: true, wantCode: http.StatusNotFound},
		{mode: "kubeconfig", path: "/jobs", wantCode: http.StatusUnauthorized},
		{mode: "kubeconfig", path: "/jobs?token=wrong", wantCode: http.StatusUnauthorized},
		{mode: "kubeconfig", method: http.MethodPost, path: "/login", wantCode: http.StatusUnauthorized},
		{mode: "token", path: "/jobs?ns=team-a", token: "alice", wantCode: http.StatusOK},
		{mode: "token", path: "/jobs?ns=team-b", token: "alice", wantCode: http.StatusForbidden},
		{mode: "kubeconfig", path: "/metrics", signedIn: true, wantCode: http.StatusOK},
		{mode: "token", path: "/metrics", token: "alice", wantCode: http.StatusOK},
		{mode: "token", path: "/metrics", token: "bob", wantCode: http.StatusForbidden},
		{mode: "token", path: "/jobs", wantCode: http.StatusUnauthorized},
		{mode: "token", path: "/jobs", token: "mallory", wantCode: http.StatusUnauthorized},
		{mode: "header", path: "/jobs", wantCode: http.StatusUnauthorized},
	}
	for _, tc := range cases {
		t.Run(tc.mode+" "+tc.path, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, stdcmp.Or(tc.method, http.MethodGet), urls[tc.mode]+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			if tc.signedIn {
				c.Jar = jar
			}
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = resp.Body.Close() }() // a live stream is left by closing it
			got := map[string]string{}
			for k := range wantSecurityHeaders {
				got[k] = resp.Header.Get(k)
			}
			if resp.StatusCode != tc.wantCode {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if diff := cmp.Diff(wantSecurityHeaders, got); diff != "" {
				t.Errorf("headers (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestNoInlineStyleOrScript: the policy refuses inline styles, scripts and event handlers, so
// the templates and the script must not rely on any (a browser would drop them, silently but
// for a console message).
func TestNoInlineStyleOrScript(t *testing.T) {
	inline := regexp.MustCompile(`(?i)\sstyle=|<script(\s[^>]*)?>[^<]|\son[a-z]+=|javascript:|<style|\.style\.|setAttribute\("style"|eval\(|new Function`)
	for _, dir := range []string{"templates", "static"} {
		files, err := fs.Glob(embedded(dir), "*")
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			data, err := fs.ReadFile(embedded(dir), name)
			if err != nil {
				t.Fatal(err)
			}
			for i, line := range strings.Split(string(data), "\n") {
				if m := inline.FindString(line); m != "" {
					t.Errorf("%s/%s:%d: %q, which the Content-Security-Policy blocks: %s", dir, name, i+1, m, strings.TrimSpace(line))
				}
			}
		}
	}
}

func embedded(dir string) fs.FS {
	if dir == "templates" {
		sub, _ := fs.Sub(templateFS, dir)
		return sub
	}
	sub, _ := fs.Sub(staticFS, dir)
	return sub
}

// TestRuntimeNamesFollowRBAC: the Jobs page's runtime filter and the Runtimes page name a
// TrainingRuntime only to a user who may list the TrainingRuntimes of its namespace, and the
// ClusterTrainingRuntimes only to one who may list them; kubeconfig mode shows what the
// kubeconfig's user reads.
func TestRuntimeNamesFollowRBAC(t *testing.T) {
	option := regexp.MustCompile(`<option(?: selected)?>([^<]+)</option>`)
	card := regexp.MustCompile(`data-runtime="([^"]+)"`)
	cases := map[string]struct {
		token, path string
		access      bool
		wantCode    int
		want        []string
	}{
		"kubeconfig mode, the Jobs page": {path: "/jobs", wantCode: http.StatusOK,
			want: []string{"team-a-tuned", "team-b-secret-project", "torch"}},
		"kubeconfig mode, the Runtimes page": {path: "/runtimes", wantCode: http.StatusOK,
			want: []string{"ClusterTrainingRuntime/torch", "TrainingRuntime/team-a-tuned", "TrainingRuntime/team-b-secret-project"}},
		"a user of team-a, the Jobs page": {access: true, token: "alice", path: "/jobs?ns=team-a", wantCode: http.StatusOK,
			want: []string{"team-a-tuned", "torch"}},
		"a user of every namespace's jobs, the Jobs page": {access: true, token: "bob", path: "/jobs", wantCode: http.StatusOK,
			want: []string{"team-a-tuned"}},
		"a user of every namespace's jobs, the Runtimes page": {access: true, token: "bob", path: "/runtimes", wantCode: http.StatusOK,
			want: []string{"TrainingRuntime/team-a-tuned"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newTestServer(t, fixture()...)
			h := srv.Handler()
			if tc.access {
				h = withAccess(srv, NewAccess(fakeReviews(aliceOfTeamA), "", ""))
			}
			req := httptest.NewRequest(http.MethodGet, tc.path, nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Fatalf("status %d, want %d: %s", rec.Code, tc.wantCode, rec.Body.String())
			}
			re := option
			if strings.HasPrefix(tc.path, "/runtimes") {
				re = card
			}
			var got []string
			for _, m := range re.FindAllStringSubmatch(rec.Body.String(), -1) {
				got = append(got, m[1])
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runtimes named (-want,+got):\n%s", diff)
			}
		})
	}
}
