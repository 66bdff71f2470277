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
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// searchFixture is OptimizationJob "search" of team-a with three trials: 0 complete (loss 0.3),
// 1 complete and best (loss 0.1), 2 running without a report.
func searchFixture() []client.Object {
	oj := &trainer.OptimizationJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "search", UID: "search-uid", CreationTimestamp: metav1.NewTime(t0)},
		Spec: trainer.OptimizationJobSpec{
			Objectives: []trainer.Objective{{Metric: "loss", Direction: trainer.ObjectiveDirectionMinimize}},
			Parameters: []trainer.Parameter{
				{Name: "lr", SearchSpace: &trainer.SearchSpace{LogUniform: &trainer.LogUniformSpace{Min: "0.001", Max: "0.1"}}},
				{Name: "opt", SearchSpace: &trainer.SearchSpace{Categorical: &trainer.CategoricalSpace{Choices: []string{"adam", "sgd"}}}},
			},
			NumTrials: 3, ParallelTrials: 1,
		},
		Status: trainer.OptimizationJobStatus{
			Conditions: []metav1.Condition{{Type: optimization.ConditionRunning, Status: metav1.ConditionTrue,
				Reason: optimization.ReasonTrialsRunning, Message: "2 of 3 trials finished (0 failed), 1 running", LastTransitionTime: metav1.NewTime(t0)}},
			Result: &trainer.OptimizationResult{TrainJobName: "search-1"},
		},
	}
	objs := []client.Object{oj}
	for i, tr := range []struct{ lr, opt, loss string }{{"0.001", "adam", "0.3"}, {"0.01", "sgd", "0.1"}, {"0.1", "adam", ""}} {
		tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: optimization.TrialName("search", i),
			Labels:          map[string]string{optimization.JobNameLabel: "search", optimization.TrialIndexLabel: strconv.Itoa(i)},
			Annotations:     map[string]string{optimization.ParametersAnnotation: optimization.EncodeParameters([]trainer.ParameterAssignment{{Name: "lr", Value: tr.lr}, {Name: "opt", Value: tr.opt}})},
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))}}}
		if tr.loss != "" {
			tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "Done", LastTransitionTime: metav1.NewTime(t0)}}
			tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: tr.loss}}, ProgressPercentage: ptr.To[int32](100)}
		}
		objs = append(objs, tj)
	}
	return objs
}

func getPage(t *testing.T, h http.Handler, path, token string) (int, string) {
	t.Helper()
	req := httptest.NewRequest(http.MethodGet, path, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	body, _ := io.ReadAll(rec.Body)
	return rec.Code, string(body)
}

// TestOptimizationPages: the list and the job's page show the trials, each linked to its
// TrainJob page, the objective per trial, the best marked in the table and the scatters.
func TestOptimizationPages(t *testing.T) {
	srv := newTestServer(t, searchFixture()...)
	srv.Store.optimizations = true
	h := srv.Handler()

	code, body := getPage(t, h, "/optimizationjobs", "")
	row := regexp.MustCompile(`(?s)<tr data-optimizationjob="team-a/search".*?</tr>`).FindString(body)
	if code != http.StatusOK || !strings.Contains(row, `href="/optimizationjobs/team-a/search"`) ||
		!strings.Contains(row, "<td>2/3</td>") || !strings.Contains(row, `<td class="best-value">0.1</td>`) {
		t.Fatalf("list: %d, row %q", code, row)
	}

	code, body = getPage(t, h, "/optimizationjobs/team-a/search", "")
	if code != http.StatusOK {
		t.Fatalf("page: %d %s", code, body)
	}
	trial := regexp.MustCompile(`(?s)<tr data-trial="([^"]+)"( class="best")?.*?<a href="([^"]+)">.*?<td class="objective">([^<]*)</td>`)
	var got []string
	for _, m := range trial.FindAllStringSubmatch(body, -1) {
		got = append(got, strings.Join([]string{m[1], m[2], m[3], m[4]}, " "))
	}
	want := []string{
		"search-0  /jobs/team-a/search-0 0.3",
		`search-1  class="best" /jobs/team-a/search-1 0.1`,
		"search-2  /jobs/team-a/search-2 -",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trials (-want,+got):\n%s", diff)
	}
	points := regexp.MustCompile(`<circle class="point( best)?" cx="([\d.]+)" cy="([\d.]+)"`).FindAllStringSubmatch(body, -1)
	var drawn []string
	for _, p := range points {
		drawn = append(drawn, p[1]+" "+p[2]+","+p[3])
	}
	// lr on a log scale from 0.001 to 0.1: 0.01 is half way; opt adam and sgd in two slots;
	// loss 0.3 at the top, 0.1 (the best) at the bottom.
	wantDrawn := []string{" 44,44", " best 240,156", " 142,44", " best 338,156"}
	if diff := cmp.Diff(wantDrawn, drawn); diff != "" {
		t.Errorf("scatter points (-want,+got):\n%s", diff)
	}
}

// TestOptimizationPagesFollowRBAC: the pages need the user's right to the optimizationjobs, and
// the trials (TrainJobs) show only to a user who may list the namespace's trainjobs.
func TestOptimizationPagesFollowRBAC(t *testing.T) {
	srv := newTestServer(t, searchFixture()...)
	srv.Store.optimizations = true
	// carol may read team-a's optimizationjobs, not its trainjobs.
	allow := func(spec authzv1.SubjectAccessReviewSpec) bool {
		if spec.User == "bob" && spec.ResourceAttributes != nil {
			spec.User = "carol"
		}
		ra := spec.ResourceAttributes
		if spec.User == "carol" && ra != nil {
			return ra.Resource == "optimizationjobs" && ra.Namespace == "team-a"
		}
		return aliceOfTeamA(spec)
	}
	h := withAccess(srv, NewAccess(fakeReviews(allow), "", ""))
	cases := map[string]struct {
		token, path string
		wantCode    int
		want        string
	}{
		"alice reads team-a's page":          {token: "alice", path: "/optimizationjobs/team-a/search", wantCode: 200, want: `class="best"`},
		"alice may not list every namespace": {token: "alice", path: "/optimizationjobs", wantCode: 403, want: "may not list optimizationjobs in every namespace"},
		"alice lists team-a's":               {token: "alice", path: "/optimizationjobs?ns=team-a", wantCode: 200, want: "<td>2/3</td>"},
		"bob (as carol) sees no trials":      {token: "bob", path: "/optimizationjobs/team-a/search", wantCode: 200, want: "The trials are not shown: forbidden: user &#34;bob&#34; may not list trainjobs in namespace team-a."},
		"nobody signed in":                   {path: "/optimizationjobs", wantCode: 401},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			code, body := getPage(t, h, tc.path, tc.token)
			if code != tc.wantCode || !strings.Contains(body, tc.want) {
				t.Errorf("%s: %d, want %d with %q:\n%s", tc.path, code, tc.wantCode, tc.want, body)
			}
			if tc.token == "bob" && strings.Contains(body, "search-1") {
				t.Errorf("a trial's name shows to a user who may not list trainjobs")
			}
		})
	}
}

// TestOptimizationJobsUnavailable: without the informer (no CRD or no right) the list says why
// and a job's page is not found... as an error page naming the reason.
func TestOptimizationJobsUnavailable(t *testing.T) {
	srv := newTestServer(t)
	srv.Store.optimizationsOff = "OptimizationJobs are not available: the UI cannot list them (no RBAC)"
	code, body := getPage(t, srv.Handler(), "/optimizationjobs", "")
	if code != http.StatusOK || !strings.Contains(body, "the UI cannot list them (no RBAC)") {
		t.Errorf("list: %d %s", code, body)
	}
	if code, _ := getPage(t, srv.Handler(), "/optimizationjobs/a/b", ""); code != http.StatusInternalServerError {
		t.Errorf("page: %d, want 500", code)
	}
}
