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
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// flagValues returns the values of every occurrence of flag in args ("--flag value" pairs).
func flagValues(args []string, flag string) []string {
	var out []string
	for i := 0; i+1 < len(args); i++ {
		if args[i] == flag {
			out = append(out, args[i+1])
		}
	}
	return out
}

// The apiserver proxies pods/log to kwok over HTTPS, checking its certificate, at the address and
// port the nodes report; kwok serves that certificate and reads Logs objects from the apiserver.
func TestPodLogsFlags(t *testing.T) {
	c := &Cluster{StateDir: t.TempDir(), Settings: DefaultSettings()}
	c.Settings.Ports = c.Settings.Ports.Offset(100)
	api := c.apiserverComponent().args
	for flag, want := range map[string]string{
		"--kubelet-preferred-address-types": "InternalIP,Hostname",
		"--kubelet-certificate-authority":   c.pkiFile("ca.crt"),
		"--kubelet-client-certificate":      c.pkiFile(kubeletClientCert.File + ".crt"),
		"--kubelet-client-key":              c.pkiFile(kubeletClientCert.File + ".key"),
	} {
		if diff := cmp.Diff([]string{want}, flagValues(api, flag)); diff != "" {
			t.Errorf("kube-apiserver %s (-want,+got):\n%s", flag, diff)
		}
	}
	kwok := c.kwokComponent().args
	for flag, want := range map[string][]string{
		"--server-address":       {"127.0.0.1:" + strconv.Itoa(c.Settings.Ports.Kwok)},
		"--tls-cert-file":        {c.pkiFile(kwokServingCert.File + ".crt")},
		"--tls-private-key-file": {c.pkiFile(kwokServingCert.File + ".key")},
		"--enable-crds":          {"Logs"},
		"--config":               {c.path("config", "kwok-stages.yaml"), c.path("config", kwokLogsConfigFile)},
	} {
		if diff := cmp.Diff(want, flagValues(kwok, flag)); diff != "" {
			t.Errorf("kwok %s (-want,+got):\n%s", flag, diff)
		}
	}

	node := c.node(1)
	wantAddrs := []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}, {Type: corev1.NodeHostName, Address: "gpu-node-1"}}
	if diff := cmp.Diff(wantAddrs, node.Status.Addresses); diff != "" {
		t.Errorf("node addresses (-want,+got):\n%s", diff)
	}
	if got := node.Status.DaemonEndpoints.KubeletEndpoint.Port; int(got) != c.Settings.Ports.Kwok {
		t.Errorf("node kubelet port %d, want kwok's %d", got, c.Settings.Ports.Kwok)
	}
	if !c.nodeEndpointCurrent(node) {
		t.Error("a new node's endpoint is not current")
	}
	kept := node.DeepCopy()
	kept.Status.DaemonEndpoints.KubeletEndpoint.Port = int32(DefaultPorts().Kwok)
	if c.nodeEndpointCurrent(kept) {
		t.Error("a node pointing at another kwok port is current")
	}
	kept = node.DeepCopy()
	kept.Status.Addresses = kept.Status.Addresses[1:]
	if c.nodeEndpointCurrent(kept) {
		t.Error("a node without an InternalIP is current")
	}
}

// criLine is the CRI log format kwok reads (k8s.io/cri-client/pkg/logs parseCRILog).
var criLine = regexp.MustCompile(`^(\S+) stdout F (.*)$`)

func readCRILog(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(string(data), "\n") {
		t.Errorf("%s does not end with a newline: kwok would wait for the rest of the line", path)
	}
	var msgs []string
	for l := range strings.Lines(string(data)) {
		m := criLine.FindStringSubmatch(strings.TrimSuffix(l, "\n"))
		if m == nil {
			t.Fatalf("%s: %q is not a CRI log line", path, l)
		}
		if _, err := time.Parse(time.RFC3339Nano, m[1]); err != nil {
			t.Errorf("%s: timestamp %q: %v", path, m[1], err)
		}
		msgs = append(msgs, m[2])
	}
	return msgs
}

func TestDefaultPodLogs(t *testing.T) {
	c := &Cluster{StateDir: t.TempDir(), Settings: DefaultSettings()}
	if err := c.writeKwokConfig(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(c.path("config", kwokLogsConfigFile))
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
		Metadata   struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Selector *struct{} `json:"selector"`
			Logs     []struct {
				Containers []string `json:"containers"`
				LogsFile   string   `json:"logsFile"`
				Follow     bool     `json:"follow"`
			} `json:"logs"`
		} `json:"spec"`
	}
	if err := yaml.UnmarshalStrict(data, &cfg); err != nil {
		t.Fatalf("%s: %v\n%s", kwokLogsConfigFile, err, data)
	}
	if cfg.APIVersion != "kwok.x-k8s.io/v1alpha1" || cfg.Kind != "ClusterLogs" || cfg.Spec.Selector != nil || len(cfg.Spec.Logs) != 1 {
		t.Fatalf("want one ClusterLogs for every pod, got:\n%s", data)
	}
	l := cfg.Spec.Logs[0]
	if l.LogsFile != c.PodLogsFile(DefaultPodLogs) || !filepath.IsAbs(l.LogsFile) || !l.Follow || len(l.Containers) != 0 {
		t.Errorf("want every container to follow %s, got %+v", c.PodLogsFile(DefaultPodLogs), l)
	}
	msgs := readCRILog(t, l.LogsFile)
	if diff := cmp.Diff(defaultPodLogLines, msgs[1:]); diff != "" {
		t.Errorf("default pod logs (-want,+got):\n%s", diff)
	}
	// Written again by the next start of kwok, not appended to.
	if err := c.writeKwokConfig(); err != nil {
		t.Fatal(err)
	}
	if again := readCRILog(t, l.LogsFile); len(again) != len(msgs) {
		t.Errorf("the default logs have %d lines after a second start, want %d", len(again), len(msgs))
	}
}

func TestAppendPodLogs(t *testing.T) {
	c := &Cluster{StateDir: t.TempDir()}
	if err := c.AppendPodLogs("job-a", "step 1 loss 2.0", "step 2\nstep 3\n"); err != nil {
		t.Fatal(err)
	}
	if err := c.AppendPodLogs("job-a", "", "done"); err != nil {
		t.Fatal(err)
	}
	want := []string{"step 1 loss 2.0", "step 2", "step 3", "", "done"}
	if diff := cmp.Diff(want, readCRILog(t, c.PodLogsFile("job-a"))); diff != "" {
		t.Errorf("appended logs (-want,+got):\n%s", diff)
	}
	if err := appendCRILog(c.PodLogsFile("empty"), time.Now()); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(c.PodLogsFile("empty")); err != nil || info.Size() != 0 {
		t.Errorf("no lines: want an empty file, got %v, %v", info, err)
	}
}

func TestPodLogsObject(t *testing.T) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "job-node-0-0-abcde", UID: "uid-1"},
		Spec: corev1.PodSpec{
			InitContainers: []corev1.Container{{Name: "init"}},
			Containers:     []corev1.Container{{Name: "node"}, {Name: "sidecar"}},
		},
	}
	o := podLogsObject(pod, "/state/pod-logs/x.log")
	if o.GetAPIVersion() != "kwok.x-k8s.io/v1alpha1" || o.GetKind() != "Logs" || o.GetNamespace() != "ns" || o.GetName() != pod.Name {
		t.Errorf("want the kwok Logs object ns/%s, got %s %s %s/%s", pod.Name, o.GetAPIVersion(), o.GetKind(), o.GetNamespace(), o.GetName())
	}
	want := []any{map[string]any{"containers": []any{"init", "node", "sidecar"}, "logsFile": "/state/pod-logs/x.log", "follow": true}}
	if diff := cmp.Diff(want, o.Object["spec"].(map[string]any)["logs"]); diff != "" {
		t.Errorf("spec.logs (-want,+got):\n%s", diff)
	}
	refs := o.GetOwnerReferences()
	if len(refs) != 1 || refs[0].Kind != "Pod" || refs[0].UID != "uid-1" || refs[0].Name != pod.Name {
		t.Errorf("want the pod as owner, got %+v", refs)
	}
}

// kwok's certificate verifies for 127.0.0.1 with the cluster CA, as the apiserver checks it; the
// apiserver's kubelet client certificate is one for clients, and is issued again when the CA
// changes (it has no names to check it by).
func TestKwokAndKubeletClientCertificates(t *testing.T) {
	dir := t.TempDir()
	ca, err := ensureCA(dir, certSpec{File: "ca", CommonName: "gantry-local-ca"})
	if err != nil {
		t.Fatal(err)
	}
	kwok, err := ensureServing(dir, ca, kwokServingCert)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	roots.AddCert(ca.cert)
	if _, err := kwok.cert.Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots}); err != nil {
		t.Errorf("kwok's certificate does not verify for 127.0.0.1: %v", err)
	}
	client, err := ensureServing(dir, ca, kubeletClientCert)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.cert.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the kubelet client certificate is not one for clients of the CA: %v", err)
	}
	again, err := ensureServing(dir, ca, kubeletClientCert)
	if err != nil {
		t.Fatal(err)
	}
	if string(again.CertPEM) != string(client.CertPEM) {
		t.Error("a valid kubelet client certificate was issued again")
	}
	otherCA, err := ensureCA(t.TempDir(), certSpec{File: "ca", CommonName: "other-ca"})
	if err != nil {
		t.Fatal(err)
	}
	reissued, err := ensureServing(dir, otherCA, kubeletClientCert)
	if err != nil {
		t.Fatal(err)
	}
	if string(reissued.CertPEM) == string(client.CertPEM) {
		t.Error("a kubelet client certificate of another CA was kept")
	}
}
