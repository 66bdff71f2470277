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
	"net/http"
	"net/http/httptest"
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

func (f *fakeVerifier) Verify(_ context.Context, token, audience, namespace string) error {
	f.calls = append(f.calls, token+" "+audience+" "+namespace)
	return f.err
}

type fakeApplier struct {
	err     error
	panics  bool
	applied []string
	status  *trainer.TrainJobTrainerStatus
}

func (f *fakeApplier) ApplyTrainerStatus(_ context.Context, namespace, name string, status *trainer.TrainJobTrainerStatus) error {
	if f.panics {
		panic("boom")
	}
	f.applied = append(f.applied, namespace+"/"+name)
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
			wantApplied: []string{"ns/job"}, wantStatus: wantReport,
		},
		"the scheme in any case, spaces around": {
			auth: "  bEaReR   tok  ", body: report, wantCode: 200, wantBody: report,
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job"}, wantStatus: wantReport,
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
			wantApplied: []string{"ns/job"}, wantStatus: wantReport},
		"the apiserver finds the request malformed": {auth: "Bearer tok", body: report, applyErr: apierrors.NewBadRequest("bad"),
			wantCode: 422, wantReason: metav1.StatusReasonBadRequest, wantMessage: "bad",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job"}, wantStatus: wantReport},
		"no such TrainJob": {auth: "Bearer tok", body: report, applyErr: apierrors.NewNotFound(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}, "job"),
			wantCode: 404, wantReason: metav1.StatusReasonNotFound, wantMessage: "Train job not found",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job"}, wantStatus: wantReport},
		"another apiserver error": {auth: "Bearer tok", body: report, applyErr: apierrors.NewServiceUnavailable("down"),
			wantCode: 500, wantReason: metav1.StatusReasonInternalError, wantMessage: "updating the TrainJob status failed",
			wantVerify:  []string{"tok trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status ns"},
			wantApplied: []string{"ns/job"}, wantStatus: wantReport},
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
