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
	"bufio"
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TestProgressTabSaysWhatIsNotCharted: a job whose metrics the history does not chart (names
// beyond the limit, no room in the budget) is told so once, in plain words, on its Progress tab
// and in the tab's live updates, so no one takes the missing curves for lost data.
func TestProgressTabSaysWhatIsNotCharted(t *testing.T) {
	limits := HistoryLimits{Points: 10, MetricNames: 2}
	limits.Bytes = limits.seriesCost("loss", "accuracy") + limits.seriesCost("loss")
	cases := map[string]struct {
		reports []*trainer.TrainJob
		want    string
	}{
		"every metric charted": {
			reports: []*trainer.TrainJob{jobReport("bert-uid", 1, false, "loss", "1", "accuracy", "0.5")},
		},
		"names beyond the limit": {
			reports: []*trainer.TrainJob{jobReport("bert-uid", 1, false, "loss", "1", "accuracy", "0.5", "lr", "0.1", "grad-norm", "3")},
			want: "2 metrics of this job's last report are not charted: the UI charts the first 2 metric names a job reports " +
				"(gantry-ui --history-metric-names). Their values are in the job's status (YAML tab).",
		},
		"a name the budget had no room for": {
			reports: []*trainer.TrainJob{
				jobReport("other", 1, false, "loss", "1", "accuracy", "0.5"),
				jobReport("bert-uid", 2, false, "loss", "1"),
				jobReport("bert-uid", 3, false, "loss", "1", "accuracy", "0.5"),
			},
			want: "1 metric of this job's last report is not charted: the UI's progress history was at its memory budget " +
				"when its name first appeared (gantry-ui --history-memory). Its value is in the job's status (YAML tab).",
		},
		"no room for the job": {
			reports: []*trainer.TrainJob{
				jobReport("other", 1, false, "loss", "1", "accuracy", "0.5"),
				jobReport("another", 1, false, "loss", "1"),
				jobReport("bert-uid", 2, false, "loss", "1"),
			},
			want: "This job's progress is not charted: the UI's progress history is at its memory budget " +
				"(gantry-ui --history-memory). Its last report is in the job's status (YAML tab).",
		},
		"a finished job's curves made room": {
			reports: []*trainer.TrainJob{
				jobReport("bert-uid", 1, true, "loss", "1", "accuracy", "0.5"),
				jobReport("another", 2, false, "loss", "1"),
				jobReport("other", 3, false, "loss", "1", "accuracy", "0.5"),
			},
			want: "This finished job's curves were dropped to make room for running jobs' within the UI's memory budget " +
				"(gantry-ui --history-memory). Its last report is in the job's status (YAML tab).",
		},
	}
	notice := regexp.MustCompile(`<p id="history-notice"[^>]*>([^<]*)</p>`)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			srv := newTestServer(t, fixture()...)
			srv.Store.History = NewBoundedHistory(limits)
			for _, tj := range tc.reports {
				srv.Store.History.Observe(tj)
			}
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/jobs/team-a/bert?tab=progress", nil))
			m := notice.FindStringSubmatch(rec.Body.String())
			if m == nil {
				t.Fatalf("the Progress tab has no notice paragraph:\n%s", rec.Body.String())
			}
			if diff := cmp.Diff(tc.want, html.UnescapeString(m[1])); diff != "" {
				t.Errorf("the page's notice (-want,+got):\n%s", diff)
			}
			if got := strings.Contains(m[0], " hidden"); got != (tc.want == "") {
				t.Errorf("hidden: %v, want %v", got, tc.want == "")
			}
			if diff := cmp.Diff(tc.want, liveEvent(t, srv, "/live/jobs/team-a/bert?tab=progress", "notice")); diff != "" {
				t.Errorf("the live update's notice (-want,+got):\n%s", diff)
			}
		})
	}
}

// liveEvent is the data of the first event named event on the live stream at path.
func liveEvent(t *testing.T, srv *Server, path, event string) string {
	t.Helper()
	ts := httptest.NewServer(srv.Handler())
	defer ts.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	name := ""
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: ") && name == event:
			return strings.TrimPrefix(line, "data: ")
		case line == "" && name == "curves":
			t.Fatalf("the stream sent the curves but no %s event", event)
		}
	}
	t.Fatalf("the stream ended without a %s event: %v", event, sc.Err())
	return ""
}
