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

package localcluster

import (
	"crypto/x509"
	"encoding/base64"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	authorizationv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

// The certificates seeded into a rotator's Secret must be ones cert-controller keeps: its CA
// check (the CA verifies for its CAName) and its serving check (the certificate verifies for the
// Service DNS name, well beyond the 90-day lookahead), while the apiserver reaches 127.0.0.1.
func TestSeededCertificatesSatisfyTheRotator(t *testing.T) {
	cases := []struct{ caName, dnsName string }{
		{"kubeflow-trainer-ca", gantryWebhookDNS},
		{"kueue-ca", kueueWebhookDNS},
	}
	for _, tc := range cases {
		t.Run(tc.caName, func(t *testing.T) {
			dir := t.TempDir()
			ca, err := ensureCA(dir, certSpec{File: "ca", CommonName: tc.caName})
			if err != nil {
				t.Fatal(err)
			}
			srv, err := ensureServing(dir, ca, serving("srv", tc.dnsName))
			if err != nil {
				t.Fatal(err)
			}
			lookahead := ca.cert.NotBefore.Add(renewBefore)
			if ok, err := rotator.ValidCert(ca.CertPEM, ca.CertPEM, ca.KeyPEM, tc.caName, nil, lookahead); !ok {
				t.Errorf("rotator rejects the CA: %v", err)
			}
			if ok, err := rotator.ValidCert(ca.CertPEM, srv.CertPEM, srv.KeyPEM, tc.dnsName, nil, lookahead); !ok {
				t.Errorf("rotator rejects the serving certificate: %v", err)
			}
			roots := x509.NewCertPool()
			roots.AddCert(ca.cert)
			for _, host := range []string{"127.0.0.1", "localhost"} {
				if _, err := srv.cert.Verify(x509.VerifyOptions{DNSName: host, Roots: roots}); err != nil {
					t.Errorf("serving certificate does not verify for %s: %v", host, err)
				}
			}
		})
	}
}

func TestCertificatesAreKeptUntilTheyNoLongerFit(t *testing.T) {
	dir := t.TempDir()
	ca, err := ensureCA(dir, certSpec{File: "ca", CommonName: "test-ca"})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ensureServing(dir, ca, serving("srv", "a.example.svc"))
	if err != nil {
		t.Fatal(err)
	}
	again, err := ensureServing(dir, ca, serving("srv", "a.example.svc"))
	if err != nil {
		t.Fatal(err)
	}
	if string(again.CertPEM) != string(srv.CertPEM) {
		t.Error("a valid certificate was issued again")
	}
	renamed, err := ensureServing(dir, ca, serving("srv", "b.example.svc"))
	if err != nil {
		t.Fatal(err)
	}
	if string(renamed.CertPEM) == string(srv.CertPEM) {
		t.Error("a certificate missing a name was kept")
	}
	otherCA, err := ensureCA(t.TempDir(), certSpec{File: "ca", CommonName: "other-ca"})
	if err != nil {
		t.Fatal(err)
	}
	reissued, err := ensureServing(dir, otherCA, serving("srv", "b.example.svc"))
	if err != nil {
		t.Fatal(err)
	}
	if string(reissued.CertPEM) == string(renamed.CertPEM) {
		t.Error("a certificate of another CA was kept")
	}
}

func TestWebhookConfigurationsCallTheLoopbackURL(t *testing.T) {
	in := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "MutatingWebhookConfiguration",
		"metadata":   map[string]any{"name": "mutating-webhook-configuration"},
		"webhooks": []any{map[string]any{
			"name":           "mpod.kb.io",
			"clientConfig":   map[string]any{"service": map[string]any{"name": "webhook-service", "namespace": "system", "path": "/mutate--v1-pod"}},
			"objectSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
			"failurePolicy":  "Fail",
		}},
	}}
	svc := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Service", "metadata": map[string]any{"name": "webhook-service"}}}
	out, err := webhookConfigurations([]*unstructured.Unstructured{svc, in}, 9445, []byte("CA"),
		map[string]string{"mutating-webhook-configuration": "kueue-mutating-webhook-configuration"})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{map[string]any{
		"name":           "mpod.kb.io",
		"clientConfig":   map[string]any{"url": "https://127.0.0.1:9445/mutate--v1-pod", "caBundle": base64.StdEncoding.EncodeToString([]byte("CA"))},
		"objectSelector": map[string]any{"matchLabels": map[string]any{"a": "b"}},
		"failurePolicy":  "Fail",
	}}
	if len(out) != 1 || out[0].GetName() != "kueue-mutating-webhook-configuration" {
		t.Fatalf("got %d configurations, first named %q", len(out), out[0].GetName())
	}
	if diff := cmp.Diff(want, out[0].Object["webhooks"]); diff != "" {
		t.Errorf("webhooks (-want,+got):\n%s", diff)
	}
	if _, err := webhookConfigurations([]*unstructured.Unstructured{svc}, 1, nil, nil); err == nil {
		t.Error("no error without any webhook configuration")
	}
}

func TestSettingsValidate(t *testing.T) {
	dup := DefaultSettings()
	dup.Ports.KueueWebhook = dup.Ports.GantryWebhook
	zero := DefaultSettings()
	zero.Nodes.Count = 0
	many := DefaultSettings()
	many.Nodes.Count = MaxNodes + 1
	cases := map[string]struct {
		s    Settings
		want string
	}{
		"defaults":       {DefaultSettings(), ""},
		"offset":         {Settings{Ports: DefaultPorts().Offset(20000), Nodes: DefaultSettings().Nodes}, ""},
		"duplicate port": {dup, "ports gantry-webhook and kueue-webhook are both 9443"},
		"no nodes":       {zero, "nodes: 0, want 1 to 3072"},
		"too many nodes": {many, "nodes: 3073, want 1 to 3072"},
		"port too large": {Settings{Ports: DefaultPorts().Offset(60000), Nodes: DefaultSettings().Nodes}, "is not between 1 and 65535"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			err := tc.s.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("Validate() = %q, want one containing %q", got, tc.want)
			}
		})
	}
}

// Every node gets a pod range of its own that the apiserver accepts (a node past the 255th
// once got 10.244.256.0/24 and the scale run could not start).
func TestPodCIDRs(t *testing.T) {
	cases := map[int]string{0: "10.244.0.0/24", 255: "10.244.255.0/24", 256: "10.245.0.0/24", 499: "10.245.243.0/24", MaxNodes - 1: "10.255.255.0/24"}
	for i, want := range cases {
		if got := podCIDR(i); got != want {
			t.Errorf("podCIDR(%d) = %s, want %s", i, got, want)
		}
		if _, _, err := net.ParseCIDR(podCIDR(i)); err != nil {
			t.Errorf("podCIDR(%d): %v", i, err)
		}
	}
}

func TestPIDRecordsIdentifyTheProcess(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe, _ = filepath.EvalSymlinks(exe)
	_, ticks, err := procStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		rec  *pidRecord
		want bool
	}{
		"this process":   {&pidRecord{PID: os.Getpid(), Exe: exe, StartTicks: ticks}, true},
		"other binary":   {&pidRecord{PID: os.Getpid(), Exe: "/usr/bin/etcd", StartTicks: ticks}, false},
		"reused PID":     {&pidRecord{PID: os.Getpid(), Exe: exe, StartTicks: ticks + 1}, false},
		"no such PID":    {&pidRecord{PID: 1 << 30, Exe: exe}, false},
		"nothing stored": {nil, false},
	}
	for name, tc := range cases {
		if got := tc.rec.alive(); got != tc.want {
			t.Errorf("%s: alive() = %v, want %v", name, got, tc.want)
		}
	}
}

func TestPortFree(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if portFree(port) {
		t.Errorf("port %d is listened on, but reported free", port)
	}
	_ = l.Close()
	if !portFree(port) {
		t.Errorf("port %s is closed, but reported in use", strconv.Itoa(port))
	}
}

// Only the roles bound to the manager's ServiceAccount are probed, each by its first rule that
// names a resource: a ClusterRole for metrics scrapers (nonResourceURLs, bound to nobody) is not
// the manager's to wait for.
func TestManagerRBACProbes(t *testing.T) {
	obj := func(y string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(y), &u.Object); err != nil {
			t.Fatal(err)
		}
		return u
	}
	sa := obj("kind: ServiceAccount\nmetadata: {name: " + gantryServiceAccount + ", namespace: " + gantryNamespace + "}")
	manager := obj(`kind: ClusterRole
metadata: {name: manager}
rules:
- {nonResourceURLs: [/healthz], verbs: [get]}
- {apiGroups: [jobset.x-k8s.io], resources: [jobsets/status], verbs: [get]}`)
	managerBinding := obj("kind: ClusterRoleBinding\nmetadata: {name: manager}\nroleRef: {kind: ClusterRole, name: manager}\n" +
		"subjects: [{kind: ServiceAccount, name: " + gantryServiceAccount + ", namespace: " + gantryNamespace + "}]")
	election := obj("kind: Role\nmetadata: {name: election, namespace: " + gantryNamespace + "}\n" +
		"rules: [{apiGroups: [coordination.k8s.io], resources: [leases], verbs: [create]}]")
	electionBinding := obj("kind: RoleBinding\nmetadata: {name: election, namespace: " + gantryNamespace + "}\nroleRef: {kind: Role, name: election}\n" +
		"subjects: [{kind: ServiceAccount, name: " + gantryServiceAccount + ", namespace: " + gantryNamespace + "}]")
	metricsReader := obj("kind: ClusterRole\nmetadata: {name: metrics-reader}\nrules: [{nonResourceURLs: [/metrics], verbs: [get]}]")
	unbound := obj("kind: ClusterRole\nmetadata: {name: edit}\nrules: [{apiGroups: [trainer.kubeflow.org], resources: [trainjobs], verbs: [create]}]")
	otherBinding := obj("kind: ClusterRoleBinding\nmetadata: {name: edit}\nroleRef: {kind: ClusterRole, name: edit}\n" +
		"subjects: [{kind: ServiceAccount, name: someone, namespace: " + gantryNamespace + "}]")

	got, err := managerRBACProbes([]*unstructured.Unstructured{sa, manager, managerBinding, election, electionBinding, metricsReader, unbound, otherBinding})
	if err != nil {
		t.Fatal(err)
	}
	want := []authorizationv1.ResourceAttributes{
		{Namespace: gantryNamespace, Verb: "get", Group: "jobset.x-k8s.io", Resource: "jobsets", Subresource: "status"},
		{Namespace: gantryNamespace, Verb: "create", Group: "coordination.k8s.io", Resource: "leases"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("probes (-want +got):\n%s", diff)
	}

	if _, err := managerRBACProbes([]*unstructured.Unstructured{manager, managerBinding}); err == nil {
		t.Error("config/rbac without the ServiceAccount was accepted")
	}
	onlyURLs := obj("kind: ClusterRole\nmetadata: {name: manager}\nrules: [{nonResourceURLs: [/metrics], verbs: [get]}]")
	if _, err := managerRBACProbes([]*unstructured.Unstructured{sa, onlyURLs, managerBinding}); err == nil {
		t.Error("a role bound to the manager that names no resource was accepted")
	}
}
