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
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// wantMetrics is /metrics of TestMetricsEndpoint's history; BUDGET stands for its budget.
const wantMetrics = `# HELP gantry_ui_history_dropped_total Values of progress reports the UI's history did not keep: of metric names beyond a job's first --history-metric-names (metric-names), or of curves the --history-memory budget had no room for (memory).
# TYPE gantry_ui_history_dropped_total counter
gantry_ui_history_dropped_total{reason="memory"} 1
gantry_ui_history_dropped_total{reason="metric-names"} 1
# HELP gantry_ui_history_evicted_jobs_total Finished jobs whose curves were dropped to make room within --history-memory for a running job's.
# TYPE gantry_ui_history_evicted_jobs_total counter
gantry_ui_history_evicted_jobs_total 0
# HELP gantry_ui_history_bytes Memory the progress curves hold, each counted at its full --history-points.
# TYPE gantry_ui_history_bytes gauge
gantry_ui_history_bytes BUDGET
# HELP gantry_ui_history_budget_bytes The progress curves' memory budget, --history-memory.
# TYPE gantry_ui_history_budget_bytes gauge
gantry_ui_history_budget_bytes BUDGET
# HELP gantry_ui_history_jobs Jobs with progress curves.
# TYPE gantry_ui_history_jobs gauge
gantry_ui_history_jobs 1
`

// TestMetricsEndpoint: /metrics counts what the history drops. In token and header modes it
// answers a bearer token allowed get on the non-resource URL /metrics, as the manager's
// endpoint does (a scraper does not come through header mode's proxy); in kubeconfig mode it is
// the signed-in browser's, like every page.
func TestMetricsEndpoint(t *testing.T) {
	limits := HistoryLimits{Points: 10, MetricNames: 1}
	limits.Bytes = limits.seriesCost("loss")
	newServer := func(metrics bool) *Server {
		srv := newTestServer(t)
		srv.Store.History = NewBoundedHistory(limits)
		srv.Store.History.Observe(jobReport("a", 1, false, "loss", "1", "accuracy", "0.5"))
		srv.Store.History.Observe(jobReport("b", 1, false, "loss", "1"))
		srv.Metrics = metrics
		return srv
	}
	local, err := NewLocalAuth()
	if err != nil {
		t.Fatal(err)
	}
	header := headerAccess(t)
	header.reviewer = NewAccess(fakeReviews(aliceOfTeamA), "", "").reviewer
	want := strings.ReplaceAll(wantMetrics, "BUDGET", strconv.FormatInt(limits.Bytes, 10))
	cases := map[string]struct {
		handler  http.Handler
		token    string
		session  bool
		wantCode int
		wantBody string
	}{
		"kubeconfig mode, signed in": {handler: local.Wrap(newServer(true).Handler()), session: true, wantCode: http.StatusOK, wantBody: want},
		"kubeconfig mode, signed out": {handler: local.Wrap(newServer(true).Handler()), wantCode: http.StatusUnauthorized,
			wantBody: "open the login link gantry ui printed (it signs in once)\n"},
		"token mode, no token": {handler: withAccess(newServer(true), NewAccess(fakeReviews(aliceOfTeamA), "", "")), wantCode: http.StatusUnauthorized,
			wantBody: "unauthenticated: send a bearer token (Authorization: Bearer ...), e.g. from kubectl create token\n"},
		"token mode, a user allowed /metrics": {handler: withAccess(newServer(true), NewAccess(fakeReviews(aliceOfTeamA), "", "")),
			token: "alice", wantCode: http.StatusOK, wantBody: want},
		"token mode, a user not allowed /metrics": {handler: withAccess(newServer(true), NewAccess(fakeReviews(aliceOfTeamA), "", "")),
			token: "bob", wantCode: http.StatusForbidden, wantBody: "user \"bob\" may not get /metrics\n"},
		"header mode, a scraper's token without the proxy": {handler: withAccess(newServer(true), header),
			token: "alice", wantCode: http.StatusOK, wantBody: want},
		"header mode, no token": {handler: withAccess(newServer(true), header), wantCode: http.StatusUnauthorized,
			wantBody: "unauthenticated: send a bearer token (Authorization: Bearer ...), e.g. from kubectl create token\n"},
		"--metrics=false": {handler: local.Wrap(newServer(false).Handler()), session: true, wantCode: http.StatusNotFound,
			wantBody: "404 page not found\n"},
	}
	// One browser signs in to the local UI; its cookie is the session of the kubeconfig cases.
	rec := httptest.NewRecorder()
	local.Wrap(http.NotFoundHandler()).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "http://127.0.0.1/jobs?token="+local.Token(), nil))
	cookies := rec.Result().Cookies()
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/metrics", nil)
			if tc.token != "" {
				req.Header.Set("Authorization", "Bearer "+tc.token)
			}
			if tc.session {
				for _, c := range cookies {
					req.AddCookie(c)
				}
			}
			rec := httptest.NewRecorder()
			tc.handler.ServeHTTP(rec, req)
			if rec.Code != tc.wantCode {
				t.Errorf("status %d, want %d", rec.Code, tc.wantCode)
			}
			if diff := cmp.Diff(tc.wantBody, rec.Body.String()); diff != "" {
				t.Errorf("body (-want,+got):\n%s", diff)
			}
			if rec.Code == http.StatusOK && !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/plain; version=0.0.4") {
				t.Errorf("Content-Type %q, want Prometheus' text format", rec.Header().Get("Content-Type"))
			}
		})
	}
}
