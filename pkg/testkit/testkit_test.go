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

package testkit

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

var now = metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))

// jobSet has a launcher and three nodes, two of them running.
func jobSet() *jobsetv1alpha2.JobSet {
	return &jobsetv1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "mnist"},
		Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
			{Name: "launcher", Replicas: 1},
			{Name: "node", Replicas: 3},
		}},
		Status: jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{
			{Name: "launcher", Active: 1, Ready: 1},
			{Name: "node", Active: 2, Ready: 1},
		}},
	}
}

func withCondition(js *jobsetv1alpha2.JobSet, typ jobsetv1alpha2.JobSetConditionType, reason, message string) *jobsetv1alpha2.JobSet {
	apimeta.SetStatusCondition(&js.Status.Conditions, metav1.Condition{
		Type: string(typ), Status: metav1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: now,
	})
	js.Status.TerminalState = string(typ)
	return js
}

func TestFinish(t *testing.T) {
	completed := withCondition(jobSet(), jobsetv1alpha2.JobSetCompleted, "AllJobsCompleted", "jobset completed successfully")
	completed.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "launcher", Succeeded: 1}, {Name: "node", Succeeded: 3}}
	failed := func(reason, message string) *jobsetv1alpha2.JobSet {
		js := withCondition(jobSet(), jobsetv1alpha2.JobSetFailed, reason, message)
		js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "launcher", Failed: 1}, {Name: "node"}}
		return js
	}
	suspended := jobSet()
	suspended.Spec.Suspend = ptr.To(true)
	failJobs := func(js *jobsetv1alpha2.JobSet) error { return fail(js, "", "", now) }
	cases := map[string]struct {
		js         *jobsetv1alpha2.JobSet
		finish     func(*jobsetv1alpha2.JobSet) error
		want       *jobsetv1alpha2.JobSet
		wantErrHas string
	}{
		"complete: every Job succeeded, none active": {
			js: jobSet(), finish: func(js *jobsetv1alpha2.JobSet) error { return complete(js, now) }, want: completed,
		},
		"complete again: unchanged": {
			js: completed.DeepCopy(), finish: func(js *jobsetv1alpha2.JobSet) error { return complete(js, metav1.Now()) }, want: completed,
		},
		"complete a failed JobSet": {
			js: failed("FailedJobs", "x"), finish: func(js *jobsetv1alpha2.JobSet) error { return complete(js, now) },
			wantErrHas: "already Failed",
		},
		"complete a suspended JobSet": {
			js: suspended, finish: func(js *jobsetv1alpha2.JobSet) error { return complete(js, now) }, wantErrHas: "is suspended",
		},
		"fail with the JobSet controller's reason": {
			js: jobSet(), finish: failJobs, want: failed("FailedJobs", "jobset failed due to one or more job failures"),
		},
		"fail with a reason and message": {
			js:     jobSet(),
			finish: func(js *jobsetv1alpha2.JobSet) error { return fail(js, "ReachedMaxRestarts", "too many", now) },
			want:   failed("ReachedMaxRestarts", "too many"),
		},
		"fail with a message only": {
			js:     jobSet(),
			finish: func(js *jobsetv1alpha2.JobSet) error { return fail(js, "", "no reason", now) }, wantErrHas: "needs a reason",
		},
		"fail a completed JobSet": {
			js: completed.DeepCopy(), finish: failJobs, wantErrHas: "already Completed",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.finish(tc.js)
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, tc.js); diff != "" {
				t.Errorf("JobSet (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestSelectRuntimes(t *testing.T) {
	shipped, err := ShippedRuntimes()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		names      []string
		want       []string
		wantErrHas string
	}{
		"nil: all":         {names: nil, want: shipped},
		"empty: none":      {names: []string{}, want: []string{}},
		"named":            {names: []string{"torch-distributed", "deepspeed-distributed"}, want: []string{"torch-distributed", "deepspeed-distributed"}},
		"not shipped":      {names: []string{"torch-distributed", "torch-distributd"}, wantErrHas: `no shipped runtime "torch-distributd"`},
		"all are runtimes": {names: shipped, want: shipped},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			objs, err := selectRuntimes(tc.names)
			if tc.wantErrHas != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
					t.Fatalf("error = %v, want one containing %q", err, tc.wantErrHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := []string{}
			for _, o := range objs {
				got = append(got, o.GetName())
			}
			if tc.names == nil {
				slices.Sort(got)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("runtimes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestManifests checks what a downstream suite gets installed: the embedded copies decode, and
// the webhooks carry the installed names and the runtime validators' object selector.
func TestManifests(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var gotCRDs []string
	for _, c := range crds {
		gotCRDs = append(gotCRDs, c.Name)
	}
	wantCRDs := []string{
		"clustertrainingruntimes.trainer.kubeflow.org", "optimizationjobs.trainer.kubeflow.org",
		"trainingruntimes.trainer.kubeflow.org", "trainjobs.trainer.kubeflow.org",
	}
	if diff := cmp.Diff(wantCRDs, gotCRDs); diff != "" {
		t.Errorf("CRDs (-want,+got):\n%s", diff)
	}

	opts, err := WebhookInstallOptions()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, m := range opts.MutatingWebhooks {
		for _, w := range m.Webhooks {
			got[m.Name] = append(got[m.Name], w.Name)
		}
	}
	for _, v := range opts.ValidatingWebhooks {
		for _, w := range v.Webhooks {
			name := w.Name
			if w.ObjectSelector != nil {
				name += " (selector)"
			}
			got[v.Name] = append(got[v.Name], name)
		}
	}
	want := map[string][]string{
		"defaulter.trainer.kubeflow.org": {"defaulter.trainjob.trainer.kubeflow.org"},
		"validator.trainer.kubeflow.org": {
			"validator.clustertrainingruntime.trainer.kubeflow.org (selector)",
			"validator.optimizationjob.trainer.kubeflow.org",
			"validator.trainingruntime.trainer.kubeflow.org (selector)",
			"validator.trainjob.trainer.kubeflow.org",
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("webhooks (-want,+got):\n%s", diff)
	}
}

// TestJobSetCRDDir finds JobSet's CRD in the module cache from the test binary's build info.
func TestJobSetCRDDir(t *testing.T) {
	dir, err := JobSetCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "jobset.x-k8s.io_jobsets.yaml")); err != nil {
		t.Errorf("JobSet's CRD is not in %s: %v", dir, err)
	}
	if _, err := moduleDir("example.com/not-a-dependency"); err == nil {
		t.Error("moduleDir found a module the binary is not built with")
	}
}

// TestDownload covers the way a binary that records its dependencies finds JobSet: by version,
// in the module cache. Nothing is fetched: the proxy is off.
func TestDownload(t *testing.T) {
	t.Setenv("GOPROXY", "off")
	crds, err := JobSetCRDDir()
	if err != nil {
		t.Fatal(err)
	}
	// The module cache names a module's directory <name>@<version>.
	_, version, ok := strings.Cut(filepath.Base(filepath.Join(crds, "..", "..", "..", "..")), "@")
	if !ok {
		t.Fatalf("%s is not in the module cache", crds)
	}
	dir, err := download(jobSetModule, version)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(crds, filepath.Join(dir, "config", "components", "crd", "bases")); diff != "" {
		t.Errorf("JobSet's CRD directory (-go list,+download):\n%s", diff)
	}
	if _, err := download(jobSetModule, "v0.0.0-not-a-version"); err == nil || !strings.Contains(err.Error(), "not-a-version") {
		t.Errorf("error = %v, want one naming the missing version", err)
	}
}

// TestStartRefusesUnpreparedEnvironment checks Start's guards, which need no apiserver.
func TestStartRefusesUnpreparedEnvironment(t *testing.T) {
	cases := map[string]struct {
		env        *envtest.Environment
		wantErrHas string
	}{
		"not started": {env: &envtest.Environment{}, wantErrHas: "start the envtest environment"},
		"no webhooks": {env: &envtest.Environment{Config: &rest.Config{}}, wantErrHas: "installs no webhooks"},
		"nil":         {env: nil, wantErrHas: "start the envtest environment"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Start(context.Background(), tc.env, Options{})
			if err == nil || !strings.Contains(err.Error(), tc.wantErrHas) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErrHas)
			}
		})
	}
}
