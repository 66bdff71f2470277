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
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// MaxBodyBytes bounds a request body: a progress report with 256 metrics of 64-character names
// and values is far below it.
const MaxBodyBytes = 64 << 10

// TokenVerifier checks a bearer token: signed by the cluster's service-account issuer, not
// expired, with audience as its only audience and issued in namespace. It returns when the token
// was issued.
type TokenVerifier interface {
	Verify(ctx context.Context, token, audience, namespace string) (issuedAt time.Time, err error)
}

// ErrVerifierNotReady is returned by a TokenVerifier that has not yet learnt the issuer and its
// keys; the request is answered 500, not 403, since the token may well be valid.
var ErrVerifierNotReady = errors.New("the token verifier is not initialized yet")

// StatusApplier writes a TrainJob's status.trainerStatus for a caller whose token was issued at
// issuedAt. It refuses with a *StaleTokenError when the TrainJob is younger than the token.
type StatusApplier interface {
	ApplyTrainerStatus(ctx context.Context, namespace, name string, issuedAt time.Time, status *trainer.TrainJobTrainerStatus) error
}

// handler serves the single route. It checks, in this order: the path (404), the method (405),
// the token (403), the TrainJob's report rate (429), the body size (413) and JSON (422), the
// server's write budget (429), then applies the status.
type handler struct {
	verifier TokenVerifier
	applier  StatusApplier
	log      logr.Logger
	perJob   *limiter
	writes   *sharedLimiter
	now      func() time.Time
	sleep    func(context.Context, time.Duration) error
}

// newHandler limits each TrainJob's reports, and all writes to qps a second after a burst
// (none when zero).
func newHandler(verifier TokenVerifier, applier StatusApplier, log logr.Logger, qps float32, burst int) *handler {
	return &handler{
		verifier: verifier, applier: applier, log: log,
		perJob: newLimiter(perTrainJobRate, perTrainJobBurst, maxTrackedTrainJobs, maxWait),
		writes: newSharedLimiter(float64(qps), burst, maxWait, time.Now()),
		now:    time.Now, sleep: sleepContext,
	}
}

func sleepContext(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rw := &recorder{ResponseWriter: w}
	log := h.log.WithValues("method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
	defer func() {
		if p := recover(); p != nil {
			log.Error(fmt.Errorf("panic: %v", p), "Status request panicked")
			if rw.code == 0 {
				writeStatus(rw, http.StatusInternalServerError, metav1.StatusReasonInternalError, "internal error")
			}
		}
		requests.WithLabelValues(strconv.Itoa(rw.code)).Inc()
		log.V(2).Info("Status request", "code", rw.code, "duration", time.Since(start).String(), "reason", rw.reason)
	}()
	h.serve(rw, r)
}

func (h *handler) serve(w *recorder, r *http.Request) {
	namespace, name, ok := parsePath(r.URL.Path)
	if !ok {
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "not found")
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, http.StatusMethodNotAllowed, metav1.StatusReasonMethodNotAllowed, "only POST is allowed")
		return
	}
	issuedAt, ok := h.authenticate(w, r, namespace, name)
	if !ok {
		return
	}
	// After the token, so that a caller without one cannot use up a TrainJob's reports.
	wait, ok := h.perJob.reserve(namespace+"/"+name, h.now())
	if !h.await(w, r, wait, ok, fmt.Sprintf("too many reports for TrainJob %s/%s: at most %v a second after a burst of %d; only the newest matters",
		namespace, name, perTrainJobRate, perTrainJobBurst)) {
		return
	}
	req, ok := readReport(w, r)
	if !ok {
		return
	}
	if req.TrainerStatus != nil && !h.write(w, r, namespace, name, issuedAt, req.TrainerStatus) {
		return
	}
	writeJSON(w, http.StatusOK, req)
}

// write applies the status within the server's write budget; on failure it has answered.
func (h *handler) write(w *recorder, r *http.Request, namespace, name string, issuedAt time.Time, status *trainer.TrainJobTrainerStatus) bool {
	wait, ok := h.writes.reserve(h.now())
	if !h.await(w, r, wait, ok, "too many reports: the status server is at its write budget (statusServer.qps)") {
		return false
	}
	if err := h.applier.ApplyTrainerStatus(r.Context(), namespace, name, issuedAt, status); err != nil {
		w.reason = err.Error()
		writeAPIError(w, err)
		return false
	}
	return true
}

// authenticate checks the bearer token (403, or 500 while the verifier is not ready) and returns
// when it was issued.
func (h *handler) authenticate(w *recorder, r *http.Request, namespace, name string) (time.Time, bool) {
	token, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		w.reason = "no bearer token"
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "a bearer token is required")
		return time.Time{}, false
	}
	issuedAt, err := h.verifier.Verify(r.Context(), token, trainjobstatus.Audience(namespace, name), namespace)
	if err != nil {
		w.reason = err.Error()
		if errors.Is(err, ErrVerifierNotReady) {
			writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, err.Error())
			return time.Time{}, false
		}
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, "the token is not valid for this TrainJob")
		return time.Time{}, false
	}
	return issuedAt, true
}

// await waits for a reserved turn, or answers 429 with Retry-After when the turn is too far off
// (ok false) or the request ends first.
func (h *handler) await(w *recorder, r *http.Request, wait time.Duration, ok bool, message string) bool {
	if ok && (wait <= 0 || h.sleep(r.Context(), wait) == nil) {
		return true
	}
	w.reason = message
	w.Header().Set("Retry-After", strconv.Itoa(max(1, int(math.Ceil(wait.Seconds())))))
	writeStatus(w, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests, message)
	return false
}

// readReport reads the body: 413 over MaxBodyBytes, 422 when it is not a report.
func readReport(w *recorder, r *http.Request) (*trainer.UpdateTrainJobStatusRequest, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
	if err != nil {
		if tooLarge := (*http.MaxBytesError)(nil); errors.As(err, &tooLarge) {
			writeStatus(w, http.StatusRequestEntityTooLarge, metav1.StatusReasonRequestEntityTooLarge,
				fmt.Sprintf("the request body is larger than %d bytes", MaxBodyBytes))
			return nil, false
		}
		writeStatus(w, http.StatusBadRequest, metav1.StatusReasonBadRequest, "reading the request body: "+err.Error())
		return nil, false
	}
	req := &trainer.UpdateTrainJobStatusRequest{}
	if err := json.Unmarshal(body, req); err != nil {
		w.reason = err.Error()
		writeStatus(w, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid, "Invalid payload")
		return nil, false
	}
	return req, true
}

// parsePath returns the namespace and name of /apis/trainer.kubeflow.org/v1alpha1/namespaces/
// {namespace}/trainjobs/{name}/status. Names no TrainJob can have do not match.
func parsePath(path string) (namespace, name string, ok bool) {
	parts := strings.Split(path, "/")
	if len(parts) != 9 || parts[0] != "" || parts[1] != "apis" || parts[2] != trainer.GroupVersion.Group ||
		parts[3] != trainer.GroupVersion.Version || parts[4] != "namespaces" || parts[6] != "trainjobs" || parts[8] != "status" {
		return "", "", false
	}
	namespace, name = parts[5], parts[7]
	if len(validation.IsDNS1123Label(namespace)) > 0 || len(validation.IsDNS1035Label(name)) > 0 {
		return "", "", false
	}
	return namespace, name, true
}

// bearerToken reads "Bearer <token>": the scheme in any case, any white space around either part.
func bearerToken(header string) (string, bool) {
	fields := strings.Fields(header)
	if len(fields) != 2 || !strings.EqualFold(fields[0], "Bearer") {
		return "", false
	}
	return fields[1], true
}

// writeAPIError maps an applier error: a token older than the TrainJob 403, an invalid or
// malformed status 422 with the apiserver's message (e.g. a progress above 100), a missing
// TrainJob 404, anything else 500.
func writeAPIError(w http.ResponseWriter, err error) {
	var stale *StaleTokenError
	switch {
	case errors.As(err, &stale):
		writeStatus(w, http.StatusForbidden, metav1.StatusReasonForbidden, stale.Error())
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		status := metav1.Status{Reason: metav1.StatusReasonInvalid, Message: err.Error()}
		var apiStatus apierrors.APIStatus
		if errors.As(err, &apiStatus) {
			status = apiStatus.Status()
		}
		status.Code = http.StatusUnprocessableEntity
		writeStatusObject(w, status)
	case apierrors.IsNotFound(err):
		writeStatus(w, http.StatusNotFound, metav1.StatusReasonNotFound, "Train job not found")
	default:
		writeStatus(w, http.StatusInternalServerError, metav1.StatusReasonInternalError, "updating the TrainJob status failed")
	}
}

func writeStatus(w http.ResponseWriter, code int, reason metav1.StatusReason, message string) {
	writeStatusObject(w, metav1.Status{Reason: reason, Message: message, Code: int32(code)})
}

// writeStatusObject writes a metav1.Status, the error body every Kubernetes client can read.
func writeStatusObject(w http.ResponseWriter, s metav1.Status) {
	s.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Status"}
	s.Status = metav1.StatusFailure
	writeJSON(w, int(s.Code), &s)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		code, data = http.StatusInternalServerError, []byte(`{"apiVersion":"v1","kind":"Status","status":"Failure","reason":"InternalError","code":500}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(data, '\n'))
}

// recorder keeps the response code for the log line and the metric.
type recorder struct {
	http.ResponseWriter
	code   int
	reason string
}

// WriteHeader closes the connection after any refusal: an unauthenticated client (or a
// misbehaving one) would otherwise keep its slot for the idle timeout, and a few addresses
// repeating bad tokens would hold every slot. A valid reporter is answered 200 and keeps its
// connection; after a rare refusal it reconnects.
func (r *recorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	if code >= http.StatusBadRequest {
		r.Header().Set("Connection", "close")
	}
	r.ResponseWriter.WriteHeader(code)
}
