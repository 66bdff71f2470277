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

package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// webhookDown answers every request as the API server does while an admission webhook's
// service has no endpoints: 500 InternalError, "failed calling webhook".
func webhookDown(w http.ResponseWriter, _ *http.Request) {
	writeStatus(w, metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
		Reason:  metav1.StatusReasonInternalError,
		Message: `Internal error occurred: failed calling webhook "vtrainjob.gantry.dev": failed to call webhook: Post "https://gantry-webhook.gantry-system.svc:443/validate?timeout=10s": dial tcp 10.96.0.7:443: connect: connection refused`})
}

func writeStatus(w http.ResponseWriter, s metav1.Status) {
	s.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_ = json.NewEncoder(w).Encode(s)
}

// failedJob serves one TrainJob, "a", that failed; lists are empty.
func failedJob(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if strings.HasSuffix(r.URL.Path, "/trainjobs/a") && r.Method == http.MethodGet {
		_, _ = fmt.Fprint(w, `{"apiVersion":"trainer.kubeflow.org/v1alpha1","kind":"TrainJob",
			"metadata":{"name":"a","namespace":"default","resourceVersion":"1"},
			"spec":{"runtimeRef":{"name":"torch"}},
			"status":{"conditions":[{"type":"Failed","status":"True","reason":"FailedJobs",
				"message":"jobset failed: node-0 reached its backoff limit","lastTransitionTime":"2026-01-01T00:00:00Z"}]}}`)
		return
	}
	if r.Method == http.MethodGet {
		_, _ = fmt.Fprint(w, `{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[]}`)
		return
	}
	writeStatus(w, metav1.Status{Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound})
}

// TestVerbExitCodes: 1 is the TrainJob's failure and nothing else; an infrastructure error
// (a webhook down during a rollout) has a code of its own, whatever the verb.
func TestVerbExitCodes(t *testing.T) {
	down := httptest.NewServer(http.HandlerFunc(webhookDown))
	defer down.Close()
	failed := httptest.NewServer(http.HandlerFunc(failedJob))
	defer failed.Close()
	job := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(job, []byte("apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: a\nspec:\n  runtimeRef:\n    name: torch\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	unreachable := "https://127.0.0.1:1"
	cases := []struct {
		name   string
		server string
		args   []string
		want   int
	}{
		{"wait: the job failed", failed.URL, []string{"wait", "a", "--timeout", "10s"}, ExitJobFailed},
		{"wait --for Complete: the job failed", failed.URL, []string{"wait", "a", "--for", "Complete"}, ExitJobFailed},
		{"logs -f: the job failed", failed.URL, []string{"logs", "a", "-f", "--pod-timeout", "1s"}, ExitJobFailed},
		{"get: a failed job is shown, not an error", failed.URL, []string{"get", "a"}, ExitOK},
		{"wait: a failed job waited for as Failed", failed.URL, []string{"wait", "a", "--for", "Failed"}, ExitOK},
		{"wait: a finished job that can never be Suspended", failed.URL, []string{"wait", "a", "--for", "Suspended"}, ExitJobFailed},
		{"get: webhook down", down.URL, []string{"get", "a"}, ExitOther},
		{"list: webhook down", down.URL, []string{"list"}, ExitOther},
		{"wait: webhook down", down.URL, []string{"wait", "a", "--timeout", "10s"}, ExitOther},
		{"train: webhook down", down.URL, []string{"train", "-f", job}, ExitOther},
		{"train --wait: webhook down", down.URL, []string{"train", "-f", job, "--wait"}, ExitOther},
		{"delete: webhook down", down.URL, []string{"delete", "a"}, ExitOther},
		{"suspend: webhook down", down.URL, []string{"suspend", "a"}, ExitOther},
		{"events: webhook down", down.URL, []string{"events", "a"}, ExitOther},
		{"logs: webhook down", down.URL, []string{"logs", "a"}, ExitOther},
		{"runtimes list: webhook down", down.URL, []string{"runtimes", "list"}, ExitOther},
		{"get: unreachable", unreachable, []string{"get", "a"}, ExitUnreachable},
		{"wait: unreachable", unreachable, []string{"wait", "a"}, ExitUnreachable},
		{"train: unreachable", unreachable, []string{"train", "-f", job}, ExitUnreachable},
		{"get: bad flag", down.URL, []string{"get", "a", "--nope"}, ExitUsage},
		{"wait: bad --for", down.URL, []string{"wait", "a", "--for", "Done"}, ExitUsage},
		{"wait: bad --timeout", down.URL, []string{"wait", "a", "--timeout", "soon"}, ExitUsage},
		{"list: bad --state", down.URL, []string{"list", "--state", "done"}, ExitUsage},
		{"train: no file", down.URL, []string{"train", "-f", filepath.Join(t.TempDir(), "none.yaml")}, ExitUsage},
		{"unknown verb", down.URL, []string{"frobnicate"}, ExitUsage},
	}
	var got, want []string
	for _, tc := range cases {
		var out, errOut bytes.Buffer
		o := NewOptions(&bytes.Buffer{}, &out, &errOut)
		o.Now = func() time.Time { return time.Date(2026, 1, 1, 1, 0, 0, 0, time.UTC) }
		args := append([]string{"--server", tc.server, "--insecure-skip-tls-verify", "-n", "default", "--request-timeout", "5s"}, tc.args...)
		code := Execute(o, NewRootCommand(o), args)
		got = append(got, fmt.Sprintf("%s: %d", tc.name, code))
		want = append(want, fmt.Sprintf("%s: %d", tc.name, tc.want))
		if code != ExitOK && !strings.HasPrefix(errOut.String(), "error: ") && !strings.Contains(errOut.String(), "\nerror: ") {
			t.Errorf("%s: exit %d without an error line; stderr %q", tc.name, code, errOut.String())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exit codes (-want +got):\n%s", diff)
	}
}
