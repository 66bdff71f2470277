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

package localrun

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

func TestExpand(t *testing.T) {
	env := []EnvVar{{Name: "A", Value: "a"}, {Name: "B", Value: "b"}}
	cases := map[string]string{
		"plain":         "plain",
		"$(A)-$(B)":     "a-b",
		"$(C)":          "$(C)",
		"$$(A)":         "$(A)",
		"cost $5":       "cost $5",
		"open $(A":      "open $(A",
		"--x=$(A)/y $A": "--x=a/y $A",
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, expand(in, env)); diff != "" {
			t.Errorf("expand(%q) (-want,+got):\n%s", in, diff)
		}
	}
}

func TestResolveEnv(t *testing.T) {
	side := &sideObjects{
		configMaps: map[string]*corev1.ConfigMap{"cm": {Data: map[string]string{"k": "from-cm", "x": "1"}}},
		secrets:    map[string]*corev1.Secret{"s": {Data: map[string][]byte{"k": []byte("from-secret")}}},
	}
	pod := metav1.ObjectMeta{Name: "j-node-0-1-local", Namespace: "ns",
		Annotations: map[string]string{"batch.kubernetes.io/job-completion-index": "1"}, Labels: map[string]string{"app": "x"}}
	field := func(path string) *corev1.EnvVarSource {
		return &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: path}}
	}
	c := &corev1.Container{
		Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m")}},
		EnvFrom:   []corev1.EnvFromSource{{Prefix: "CM_", ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}}}},
		Env: []corev1.EnvVar{
			{Name: "RANK", ValueFrom: field("metadata.annotations['batch.kubernetes.io/job-completion-index']")},
			{Name: "POD", ValueFrom: field("metadata.name")},
			{Name: "NS", ValueFrom: field("metadata.namespace")},
			{Name: "IP", ValueFrom: field("status.podIP")},
			{Name: "APP", ValueFrom: field("metadata.labels['app']")},
			{Name: "CPU", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{Resource: "requests.cpu"}}},
			{Name: "FROM_CM", ValueFrom: &corev1.EnvVarSource{ConfigMapKeyRef: &corev1.ConfigMapKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "cm"}, Key: "k"}}},
			{Name: "FROM_SECRET", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "s"}, Key: "k"}}},
			{Name: "OPTIONAL", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "absent"}, Key: "k", Optional: ptr.To(true)}}},
			{Name: "DERIVED", Value: "rank-$(RANK)"},
			{Name: "CM_x", Value: "overridden"},
		},
	}
	got, err := resolveEnv(c, &corev1.PodTemplateSpec{}, pod, side)
	if err != nil {
		t.Fatal(err)
	}
	want := []EnvVar{
		{"CM_k", "from-cm"}, {"CM_x", "overridden"}, {"RANK", "1"}, {"POD", "j-node-0-1-local"}, {"NS", "ns"},
		{"IP", "127.0.0.1"}, {"APP", "x"}, {"CPU", "2"}, {"FROM_CM", "from-cm"}, {"FROM_SECRET", "from-secret"},
		{"DERIVED", "rank-1"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("resolveEnv (-want,+got):\n%s", diff)
	}

	c.Env = []corev1.EnvVar{{Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{LocalObjectReference: corev1.LocalObjectReference{Name: "hf-token"}, Key: "token"}}}}
	_, err = resolveEnv(c, &corev1.PodTemplateSpec{}, pod, side)
	if err == nil || !strings.Contains(err.Error(), `env TOKEN: key "token" of Secret "hf-token" is not among the rendered objects`) {
		t.Errorf("a Secret of the cluster: error %v", err)
	}
}

func TestMountPath(t *testing.T) {
	rw := &rewriter{workdir: "/w"}
	c := &corev1.Container{VolumeMounts: []corev1.VolumeMount{
		{Name: "init", MountPath: "/workspace"}, {Name: "model", MountPath: "/workspace/model/"}, {Name: "sub", MountPath: "/data", SubPath: "part"},
	}}
	cases := map[string]string{
		"/workspace":                   "/w/volumes/init",
		"/workspace/dataset/x":         "/w/volumes/init/dataset/x",
		"/workspace/model/tokenizer":   "/w/volumes/model/tokenizer",
		"/workspaces":                  "/workspaces",
		"dir=/workspace/out":           "dir=/w/volumes/init/out",
		"--data=/data/file":            "--data=/w/volumes/sub/part/file",
		"relative/workspace":           "relative/workspace",
		"https://host/workspace/thing": "https://host/workspace/thing",
		// The path as the container resolves it: what leaves the mount is not the volume's.
		"/workspace/a/../b":              "/w/volumes/init/b",
		"/workspace/../../../etc/passwd": "/workspace/../../../etc/passwd",
		"--out=/workspace/../../x":       "--out=/workspace/../../x",
		"/workspace/model/../x":          "/w/volumes/init/x",
	}
	for in, want := range cases {
		if diff := cmp.Diff(want, rw.mountPath(in, c)); diff != "" {
			t.Errorf("mountPath(%q) (-want,+got):\n%s", in, diff)
		}
	}
}

// TestStatusEndpoint: the run's status server takes reports with its token over its CA, and
// refuses others.
func TestStatusEndpoint(t *testing.T) {
	ep, err := NewStatusEndpoint("ns", "job")
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	got := make(chan *trainer.TrainJobTrainerStatus, 1)
	go func() { _ = ep.Serve(ctx, func(s *trainer.TrainJobTrainerStatus) { got <- s }) }()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(ep.CA)) {
		t.Fatal("the CA is not PEM")
	}
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}}
	post := func(token string) int {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, ep.URL, bytes.NewBufferString(`{"trainerStatus":{"progressPercentage":40}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	if code := post("wrong"); code != http.StatusForbidden {
		t.Errorf("a wrong token: %d, want 403", code)
	}
	if code := post(ep.Token); code != http.StatusOK {
		t.Fatalf("the run's token: %d, want 200", code)
	}
	if s := <-got; s.ProgressPercentage == nil || *s.ProgressPercentage != 40 {
		t.Errorf("applied %+v, want progress 40", s)
	}
}

func TestRewriteValue(t *testing.T) {
	rw, err := newRewriter(&jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Name: "my.job"}, Spec: jobset.JobSetSpec{
		ReplicatedJobs: []jobset.ReplicatedJob{{Name: "node", Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{
			Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{Containers: []corev1.Container{{Ports: []corev1.ContainerPort{{ContainerPort: 29500}}}}}}}}}},
	}}, Options{Workdir: "/w", FreePort: func() (int32, error) { return 40001, nil }}, &Plan{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in      string
		portVar bool
		want    string
	}{
		{"my.job-node-0-1.my.job", false, "127.0.0.1"},
		{"my.job-node-0-1.my.job.default.svc:29500", false, "127.0.0.1:40001"},
		{"xmy.job-node-0-1.my.job", false, "xmy.job-node-0-1.my.job"},
		{"myXjob-node-0-1.myXjob", false, "myXjob-node-0-1.myXjob"},
		{"--rdzv_endpoint=localhost:29500", false, "--rdzv_endpoint=localhost:40001"},
		{"mylocalhost:29500", false, "mylocalhost:29500"},
		{"localhost:295000", false, "localhost:295000"},
		{"29500", true, "40001"},
		{"29500", false, "29500"},
		{"4294996796", true, "4294996796"},
	}
	for _, tc := range cases {
		got, _ := rw.value(tc.in, tc.portVar, nil)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("value(%q, port %v) (-want,+got):\n%s", tc.in, tc.portVar, diff)
		}
	}
}

func TestFollowWriter(t *testing.T) {
	var out bytes.Buffer
	f := &followWriter{w: &out}
	a, b := f.step("node-0"), f.step("node-1")
	_, _ = a.Write([]byte("one\ntw"))
	_, _ = b.Write([]byte("other\n"))
	_, _ = a.Write([]byte("o\nthree"))
	f.flush("node-0")
	_, _ = b.Write([]byte(strings.Repeat("=", maxPartial+1)))
	want := "[node-0] one\n[node-1] other\n[node-0] two\n[node-0] three\n[node-1] " + strings.Repeat("=", maxPartial+1) + "\n"
	if diff := cmp.Diff(want, out.String()); diff != "" {
		t.Errorf("follow output (-want,+got):\n%s", diff)
	}
}
