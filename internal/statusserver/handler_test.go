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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

const route = "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status"

type fakeVerifier struct {
	err   error
	calls []string
}

func (f *fakeVerifier) Verify(_ context.Context, token, audience, namespace string) (time.Time, error) {
	f.calls = append(f.calls, token+" "+audience+" "+namespace)
	return issued, f.err
}

// issued is when fakeVerifier's tokens were issued.
var issued = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

type fakeApplier struct {
	err     error
	panics  bool
	applied []string
	status  *trainer.TrainJobTrainerStatus
}

func (f *fakeApplier) ApplyTrainerStatus(_ context.Context, namespace, name string, issuedAt time.Time, status *trainer.TrainJobTrainerStatus) error {
	if f.panics {
		panic("boom")
	}
	f.applied = append(f.applied, namespace+"/"+name+" "+issuedAt.Format(time.RFC3339))
	f.status = status
	return f.err
}

var gk = schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}

func TestHandler(t *testing.T) {
	report := `{"trainerStatus":{"progressPercentage":42,"estimatedRemainingSeconds":120,` +
		`"metrics":[{"name":"loss","value":"0.123"}],"lastUpdatedTime":"2025-01-23T10:30:45Z"}}`
	wantReport := &trainer.TrainJobTrainerStatus{
		ProgressPercentage: ptr.To[int32](42), EstimatedRemainingSeconds: ptr.To[int32](120),
		Metrics:         []trainer.Metric{{Name: "loss", Value: "0.123"}},
		LastUpdatedTime: metav1.NewTime(time.Date(2025, 1, 23, 10, 30, 45, 0, time.UTC)),
	}
	invalid := apierrors.NewInvalid(gk, "job", field.ErrorList{field.Invalid(
		field.NewPath("status", "trainerStatus", "progressPercentage"), 101, "should be less than or equal to 100")})
	cases := map[string]struct {
		method, path, auth, body string
		verifyErr, applyErr      error
		applyPanics              bool
		wantCode                 int
		wantReason               metav1.StatusReason
		wantMessage              string
		wantBody                 string // for 200: the echo
		wantVerify               []string
		wantApplied              []string
		wantStatus               *trainer.TrainJobTrainerStatus
	}{
		"a report is applied and echoed": {
			auth: "Bearer tok", body: report, wantCode: 200, wantBody: report,
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport,
		},
		"the scheme in any case, spaces around": {
			auth: "  bEaReR   tok  ", body: report, wantCode: 200, wantBody: report,
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport,
		},
		"a tab after the scheme": {
			auth: "bearer\ttok", body: `{}`, wantCode: 200, wantBody: `{}`,
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
		},
		"two tokens": {auth: "Bearer a b", body: report,
			wantCode: 403, wantReason: metav1.StatusReasonForbidden, wantMessage: "a bearer token is required"},
		"no trainerStatus: echoed, nothing written": {
			auth: "Bearer tok", body: `{}`, wantCode: 200, wantBody: `{}`,
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
		},
		"another path": {path: "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job", auth: "Bearer tok",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "not found"},
		"a trailing slash": {path: route + "/", auth: "Bearer tok",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "not found"},
		"the root": {path: "/", wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "not found"},
		"a name no TrainJob can have": {path: "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/Job_1/status", auth: "Bearer tok",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "not found"},
		"another version": {path: "/apis/trainer.kubeflow.org/v1/namespaces/ns/trainjobs/job/status", auth: "Bearer tok",
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "not found"},
		"GET": {method: http.MethodGet, auth: "Bearer tok",
			wantCode: 405, wantReason: metav1.StatusReasonMethodNotAllowed, wantMessage: "only POST is allowed"},
		"no token": {body: report,
			wantCode: 403, wantReason: metav1.StatusReasonForbidden, wantMessage: "a bearer token is required"},
		"another scheme": {auth: "Basic dXNlcjpwYXNz", body: report,
			wantCode: 403, wantReason: metav1.StatusReasonForbidden, wantMessage: "a bearer token is required"},
		"an empty bearer token": {auth: "Bearer  ", body: report,
			wantCode: 403, wantReason: metav1.StatusReasonForbidden, wantMessage: "a bearer token is required"},
		"a token the verifier refuses": {auth: "Bearer tok", body: report, verifyErr: errors.New("expired"),
			wantCode: 403, wantReason: metav1.StatusReasonForbidden, wantMessage: "the token is not valid for this TrainJob",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"the verifier is not initialized": {auth: "Bearer tok", body: report, verifyErr: ErrVerifierNotReady,
			wantCode: 500, wantReason: metav1.StatusReasonInternalError, wantMessage: ErrVerifierNotReady.Error(),
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"a body over 64 KiB": {auth: "Bearer tok", body: `{"trainerStatus":{"metrics":[` + strings.Repeat(`{"name":"n","value":"v"},`, 3000) + `]}}`,
			wantCode: 413, wantReason: metav1.StatusReasonRequestEntityTooLarge, wantMessage: "the request body is larger than 65536 bytes",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"bad JSON": {auth: "Bearer tok", body: `{"trainerStatus":`,
			wantCode: 422, wantReason: metav1.StatusReasonInvalid, wantMessage: "Invalid payload",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"a wrong type": {auth: "Bearer tok", body: `{"trainerStatus":{"progressPercentage":"half"}}`,
			wantCode: 422, wantReason: metav1.StatusReasonInvalid, wantMessage: "Invalid payload",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"two JSON documents": {auth: "Bearer tok", body: `{} {}`,
			wantCode: 422, wantReason: metav1.StatusReasonInvalid, wantMessage: "Invalid payload",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
		"the apiserver refuses the status": {auth: "Bearer tok", body: report, applyErr: invalid,
			wantCode: 422, wantReason: metav1.StatusReasonInvalid, wantMessage: invalid.Error(),
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport},
		"the apiserver finds the request malformed": {auth: "Bearer tok", body: report, applyErr: apierrors.NewBadRequest("bad"),
			wantCode: 422, wantReason: metav1.StatusReasonBadRequest, wantMessage: "bad",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport},
		"no such TrainJob": {auth: "Bearer tok", body: report, applyErr: apierrors.NewNotFound(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}, "job"),
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "Train job not found",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport},
		"another apiserver error": {auth: "Bearer tok", body: report, applyErr: apierrors.NewServiceUnavailable("down"),
			wantCode: 500, wantReason: metav1.StatusReasonInternalError, wantMessage: "updating the TrainJob status failed",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport},
		"a token older than the TrainJob": {auth: "Bearer tok", body: report, applyErr: &StaleTokenError{Namespace: "ns", Name: "job", UID: "u2"},
			wantCode: 403, wantReason: metav1.StatusReasonForbidden,
			wantMessage: "the token was issued before TrainJob ns/job (uid u2) was created: it belongs to an earlier TrainJob of that name",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job 2026-01-02T03:04:05Z"}, wantStatus: wantReport},
		"a panic": {auth: "Bearer tok", body: report, applyPanics: true,
			wantCode: 500, wantReason: metav1.StatusReasonInternalError, wantMessage: "internal error",
			wantVerify: []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			v := &fakeVerifier{err: tc.verifyErr}
			a := &fakeApplier{err: tc.applyErr, panics: tc.applyPanics}
			method, path := tc.method, tc.path
			if method == "" {
				method = http.MethodPost
			}
			if path == "" {
				path = route
			}
			req := httptest.NewRequest(method, path, strings.NewReader(tc.body))
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			rec := httptest.NewRecorder()
			Handler(v, a, logr.Discard()).ServeHTTP(rec, req)

			if diff := cmp.Diff(tc.wantCode, rec.Code); diff != "" {
				t.Errorf("code (-want,+got):\n%s\nbody: %s", diff, rec.Body)
			}
			if diff := cmp.Diff("application/json", rec.Header().Get("Content-Type")); diff != "" {
				t.Errorf("content type (-want,+got):\n%s", diff)
			}
			if tc.wantCode == http.StatusOK {
				if diff := cmp.Diff(tc.wantBody, strings.TrimSpace(rec.Body.String())); diff != "" {
					t.Errorf("echo (-want,+got):\n%s", diff)
				}
			} else {
				got := metav1.Status{}
				if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
					t.Fatalf("the error body is not a Status: %v: %s", err, rec.Body)
				}
				want := metav1.Status{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}, Status: metav1.StatusFailure,
					Reason: tc.wantReason, Message: tc.wantMessage, Code: int32(tc.wantCode)}
				got.Details = nil
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Status (-want,+got):\n%s", diff)
				}
			}
			if diff := cmp.Diff(tc.wantVerify, v.calls); diff != "" {
				t.Errorf("verifications (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantApplied, a.applied); diff != "" {
				t.Errorf("applies (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStatus, a.status); diff != "" {
				t.Errorf("applied status (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMethodNotAllowedNamesPOST(t *testing.T) {
	rec := httptest.NewRecorder()
	Handler(&fakeVerifier{}, &fakeApplier{}, logr.Discard()).ServeHTTP(rec, httptest.NewRequest(http.MethodPut, route, nil))
	if diff := cmp.Diff("POST", rec.Header().Get("Allow")); diff != "" {
		t.Errorf("Allow (-want,+got):\n%s", diff)
	}
}

// TestRateLimitPerTrainJob: a TrainJob's reports beyond its burst wait their turn, up to 2 s;
// beyond that they are answered 429 with Retry-After at once. Another TrainJob's are not held
// back, and the write budget, when set, works the same way across TrainJobs.
func TestRateLimitPerTrainJob(t *testing.T) {
	cases := map[string]struct {
		qps   float32
		burst int
		posts []string
		want  []string
	}{
		"a TrainJob's burst, two waits, then 429s; another TrainJob goes on": {
			posts: append(slices.Repeat([]string{"busy"}, 13), "quiet", "busy"),
			want: append(slices.Repeat([]string{"200"}, 10), "200 after 1s", "200 after 2s",
				"429 Retry-After 3: too many reports for TrainJob ns/busy: at most 1 a second after a burst of 10; only the newest matters",
				"200",
				"429 Retry-After 3: too many reports for TrainJob ns/busy: at most 1 a second after a burst of 10; only the newest matters"),
		},
		"the write budget across TrainJobs": {
			qps: 2, burst: 2, posts: []string{"a", "b", "c", "d", "e", "f"},
			want: []string{"200", "200", "200 after 500ms", "200 after 1s", "200 after 1.5s", "200 after 2s"},
		},
		"the write budget exhausted": {
			qps: 1, burst: 1, posts: []string{"a", "b", "c", "d"},
			want: []string{"200", "200 after 1s", "200 after 2s",
				"429 Retry-After 3: too many reports: the status server is at its write budget (statusServer.qps)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			now := time.Unix(1_800_000_000, 0)
			h := newHandler(&fakeVerifier{}, &fakeApplier{}, logr.Discard(), tc.qps, tc.burst)
			var slept time.Duration
			// The clock stands still: each wait is what the report would sleep.
			h.now = func() time.Time { return now }
			h.sleep = func(_ context.Context, d time.Duration) error { slept = d; return nil }
			var got []string
			for _, job := range tc.posts {
				slept = 0
				req := httptest.NewRequest(http.MethodPost, "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/"+job+"/status",
					strings.NewReader(`{"trainerStatus":{"lastUpdatedTime":"2025-01-23T10:30:45Z"}}`))
				req.Header.Set("Authorization", "Bearer tok")
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				switch {
				case rec.Code == http.StatusTooManyRequests:
					status := metav1.Status{}
					if err := json.Unmarshal(rec.Body.Bytes(), &status); err != nil {
						t.Fatal(err)
					}
					if status.Reason != metav1.StatusReasonTooManyRequests || status.Code != http.StatusTooManyRequests {
						t.Errorf("429 body %+v, want reason TooManyRequests and code 429", status)
					}
					if c := rec.Header().Get("Connection"); c != "close" {
						t.Errorf("429 with Connection %q, want close: the refused client's slot is freed", c)
					}
					got = append(got, fmt.Sprintf("429 Retry-After %s: %s", rec.Header().Get("Retry-After"), status.Message))
				case slept > 0:
					got = append(got, fmt.Sprintf("%d after %v", rec.Code, slept))
				default:
					got = append(got, strconv.Itoa(rec.Code))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answers (-want,+got):\n%s", diff)
			}
		})
	}
}
