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

package webhook

import (
	stdcmp "cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// Hostile admission requests (issue 13): what the apiserver would send (it bounds bodies at
// 3 MiB and has decoded, pruned and, for validating webhooks, schema-checked the object) and what
// a client reaching the webhook Service directly could send. Every request gets an answer, in
// bounded time and memory, never a panic (controller-runtime would turn one into a 500).

const (
	// webhookDeadline is the apiserver's webhook timeout (Gantry's webhook configurations keep
	// the default, 10 s): past it the request fails whatever the webhook says. The heaviest case,
	// a 3 MiB runtime, takes about 2.5 s alone and took over 5 s beside the other packages' tests
	// on 2 cores, so a tighter bound measured the machine, not the webhook.
	webhookDeadline        = 10 * time.Second
	webhookMaxAlloc uint64 = 256 << 20
)

// runtimeOf returns a ClusterTrainingRuntime "name" of jobs replicated jobs, each of replicas Jobs
// of count pods.
func runtimeOf(name string, jobs int, replicas, count int32) *trainer.ClusterTrainingRuntime {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	node := utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node)
	rjs := make([]jobsetv1alpha2.ReplicatedJob, jobs)
	for i := range rjs {
		rjs[i] = *node.DeepCopy()
		rjs[i].Name = fmt.Sprintf("j%d", i)
		rjs[i].Replicas = replicas
		rjs[i].Template.Spec.Parallelism = ptr.To(count)
		if i > 0 {
			rjs[i].Template.Labels = nil
		}
	}
	spec.Template.Spec.ReplicatedJobs = rjs
	return utiltesting.MakeClusterTrainingRuntimeWrapper(name).Spec(spec).Obj()
}

// hostileServer holds the three webhooks as the manager serves them, over a cluster with the
// runtimes "torch-distributed", "wide" (a million pods in all) and "huge" (50 million).
type hostileServer struct {
	mutateTrainJob, validateTrainJob, validateRuntime http.Handler
}

func newHostileServer(t *testing.T) *hostileServer {
	t.Helper()
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	rt, err := render.NewRuntime()
	if err != nil {
		t.Fatal(err)
	}
	torch := utiltesting.MakeClusterTrainingRuntimeWrapper("torch-distributed").
		Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(torch, runtimeOf("wide", 10, 1, 100_000), runtimeOf("huge", 50, 10, 100_000)).Build()
	return &hostileServer{
		mutateTrainJob:   admission.WithDefaulter[*trainer.TrainJob](s, &TrainJobDefaulter{clock: clock.RealClock{}}),
		validateTrainJob: admission.WithValidator[*trainer.TrainJob](s, &TrainJobValidator{client: c, apiReader: c, runtime: rt}),
		validateRuntime:  admission.WithValidator[*trainer.ClusterTrainingRuntime](s, RuntimeValidator[*trainer.ClusterTrainingRuntime]{}),
	}
}

// review is an AdmissionReview body creating object, given as JSON text.
func review(kind, resource, object string) string {
	return `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u1", ` +
		`"kind": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "kind": "` + kind + `"}, ` +
		`"resource": {"group": "trainer.kubeflow.org", "version": "v1alpha1", "resource": "` + resource + `"}, ` +
		`"name": "job", "namespace": "ns", "operation": "CREATE", "userInfo": {}, "object": ` + object + `}}`
}

func trainJobReview(object string) string { return review("TrainJob", "trainjobs", object) }

func mustJSON(t *testing.T, obj any) string {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// serveBounded posts body to h and returns the response, failing the test unless it comes within
// webhookDeadline having allocated at most maxAlloc bytes.
func serveBounded(t *testing.T, h http.Handler, body string, maxAlloc uint64) *admissionv1.AdmissionResponse {
	t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/validate", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	done := make(chan struct{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	go func() { defer close(done); h.ServeHTTP(rec, req) }()
	select {
	case <-done:
	case <-time.After(webhookDeadline):
		t.Fatalf("no answer within %v", webhookDeadline)
	}
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	if alloc > maxAlloc {
		t.Errorf("the webhook allocated %d MiB, want at most %d MiB", alloc>>20, maxAlloc>>20)
	}
	if os.Getenv("GANTRY_HOSTILE_VERBOSE") != "" {
		t.Logf("body %d KiB: %v, %d MiB allocated", len(body)>>10, time.Since(start).Round(time.Millisecond), alloc>>20)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Response == nil {
		t.Fatalf("response %q: %v", rec.Body.String(), err)
	}
	return out.Response
}

func TestWebhooksHostileRequests(t *testing.T) {
	srv := newHostileServer(t)
	job := func(mutate func(*trainer.TrainJob)) string {
		tj := utiltesting.MakeTrainJobWrapper("ns", "job").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").Obj()
		mutate(tj)
		return trainJobReview(mustJSON(t, tj))
	}
	manyEnv := make([]corev1.EnvVar, 10_000)
	for i := range manyEnv {
		manyEnv[i] = corev1.EnvVar{Name: fmt.Sprintf("VAR_%d", i), Value: "x"}
	}
	manyPatches := make([]trainer.RuntimePatch, 1000)
	for i := range manyPatches {
		manyPatches[i] = utiltesting.MakeRuntimePatchWrapper(fmt.Sprintf("example.com/m%d", i)).JobSetLabel("k", "v").Obj()
	}
	const rawJob = `{"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "metadata": {"name": "job", "namespace": "ns"}, ` +
		`"spec": {"runtimeRef": {"name": "torch-distributed", "apiGroup": "trainer.kubeflow.org", "kind": "ClusterTrainingRuntime"}, "trainer": %s}}`
	cases := map[string]struct {
		handler     http.Handler
		body        string
		wantAllowed bool
		wantCode    int32
		wantMessage string
		// maxAlloc overrides webhookMaxAlloc.
		maxAlloc uint64
		// heavy cases take a second or more; skipped with -short.
		heavy bool
	}{
		"a TrainJob on a runtime of a million pods": {
			handler: srv.validateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.RuntimeRef.Name = "wide" }),
		},
		"a TrainJob on a runtime of 50 million pods, allowed as Kubeflow Trainer allows it": {
			handler: srv.validateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.RuntimeRef.Name = "huge" }),
		},
		"1.5 MiB of annotations, mutating": {
			handler: srv.mutateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Annotations = map[string]string{"a": strings.Repeat("x", 3<<19)} }),
		},
		"10,000 env vars, mutating": {
			handler: srv.mutateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.Trainer = &trainer.Trainer{Env: manyEnv} }),
		},
		"10,000 env vars, validating (sent directly: the apiserver allows 128)": {
			handler: srv.validateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.Trainer = &trainer.Trainer{Env: manyEnv} }),
		},
		"1,000 runtime patches, mutating": {
			handler: srv.mutateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.RuntimePatches = manyPatches }),
		},
		"1,000 runtime patches, validating": {
			handler: srv.validateTrainJob, wantAllowed: true,
			body: job(func(tj *trainer.TrainJob) { tj.Spec.RuntimePatches = manyPatches }),
		},
		"JSON 100,000 levels deep": {
			handler: srv.validateTrainJob, wantCode: http.StatusBadRequest,
			body:        trainJobReview(fmt.Sprintf(rawJob, `{"command": `+strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)+"}")),
			wantMessage: "exceeded max depth",
		},
		"numNodes 1e30": {
			handler: srv.validateTrainJob, wantCode: http.StatusBadRequest,
			body:        trainJobReview(fmt.Sprintf(rawJob, `{"numNodes": 1e30}`)),
			wantMessage: "cannot unmarshal number 1e30 into Go struct field Trainer.spec.trainer.numNodes of type int32",
		},
		"invalid UTF-8 in a string": {
			handler: srv.validateTrainJob, wantAllowed: true,
			body: trainJobReview(fmt.Sprintf(rawJob, "{\"command\": [\"\xff\xfe\"]}")),
		},
		"a body over 7 MiB": {
			handler: srv.validateTrainJob, wantCode: http.StatusRequestEntityTooLarge,
			body:        trainJobReview(fmt.Sprintf(rawJob, `{"command": ["`+strings.Repeat("x", 7<<20)+`"]}`)),
			wantMessage: "request entity is too large; limit is 7340032 bytes",
		},
		"a list": {
			handler: srv.validateTrainJob, wantCode: http.StatusBadRequest,
			body:        trainJobReview("[1, 2]"),
			wantMessage: "cannot unmarshal array into Go value of type struct",
		},
		"an empty object": {
			handler: srv.validateTrainJob, wantCode: http.StatusForbidden,
			body:        trainJobReview("{}"),
			wantMessage: `spec: Required value: a TrainJob needs a spec, with at least spec.runtimeRef`,
		},
		"no request": {
			handler: srv.validateTrainJob, wantCode: http.StatusBadRequest,
			body:        `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}`,
			wantMessage: `unknown operation ""`,
		},
		"no request, mutating": {
			handler: srv.mutateTrainJob, wantCode: http.StatusBadRequest,
			body:        `{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}`,
			wantMessage: "there is no content to decode",
		},
		"not JSON": {
			handler: srv.validateTrainJob, wantCode: http.StatusBadRequest,
			body:        "apiVersion: v1\x00\xff",
			wantMessage: "yaml: control characters are not allowed",
		},
		"a runtime of 50 replicated jobs of 20 containers of 100 env vars, 3 MiB": {
			handler: srv.validateRuntime, wantAllowed: true,
			body: review("ClusterTrainingRuntime", "clustertrainingruntimes", mustJSON(t, wideRuntime(50, 20, 100))),
		},
		"a runtime of 100,000 minimal replicated jobs, 3 MiB, as the apiserver would send it": {
			handler: srv.validateRuntime, wantAllowed: true,
			body: review("ClusterTrainingRuntime", "clustertrainingruntimes", `{"apiVersion": "trainer.kubeflow.org/v1alpha1", `+
				`"kind": "ClusterTrainingRuntime", "metadata": {"name": "rt"}, "spec": {"template": {"spec": {"replicatedJobs": [`+
				minimalJobs(100_000)+`]}}}}`),
			// Each item is a 1.2 KiB Go struct: 120 MiB decoded, and decoding grows the slice
			// step by step (issue 13: the API puts no bound on replicatedJobs).
			maxAlloc: 1 << 30,
			heavy:    true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if tc.heavy && testing.Short() {
				t.Skip("a 3 MiB object; skipped with -short")
			}
			resp := serveBounded(t, tc.handler, tc.body, stdcmp.Or(tc.maxAlloc, webhookMaxAlloc))
			var code int32
			message := ""
			if resp.Result != nil {
				code, message = resp.Result.Code, resp.Result.Message
			}
			if diff := cmp.Diff(tc.wantAllowed, resp.Allowed); diff != "" {
				t.Errorf("allowed (-want,+got):\n%s\nmessage: %.500s", diff, message)
			}
			if !tc.wantAllowed && code != tc.wantCode {
				t.Errorf("code %d, want %d; message: %.500s", code, tc.wantCode, message)
			}
			if !strings.Contains(message, tc.wantMessage) || strings.Contains(message, "panic") {
				t.Errorf("message %.500q, want one with %q and no panic", message, tc.wantMessage)
			}
		})
	}
}

// minimalJobs is n replicated jobs with a name and an empty template, JSON.
func minimalJobs(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `{"name": "j%d", "template": {}}`, i)
	}
	return b.String()
}

// wideRuntime is a ClusterTrainingRuntime of jobs replicated jobs of containers containers of env
// env vars each.
func wideRuntime(jobs, containers, env int) *trainer.ClusterTrainingRuntime {
	rt := runtimeOf("rt", jobs, 1, 1)
	vars := make([]corev1.EnvVar, env)
	for i := range vars {
		vars[i] = corev1.EnvVar{Name: fmt.Sprintf("V%d", i), Value: "x"}
	}
	for i := range rt.Spec.Template.Spec.ReplicatedJobs {
		pod := &rt.Spec.Template.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
		for c := range containers {
			pod.Containers = append(pod.Containers, corev1.Container{Name: fmt.Sprintf("c%d", c), Image: "img", Env: vars})
		}
	}
	return rt
}
