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

package config

import (
	"crypto/tls"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
)

func write(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoad(t *testing.T) {
	cases := map[string]struct {
		content string
		wantErr string
	}{
		"a full file": {content: `apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {port: 9443}
metrics: {bindAddress: ":8443"}
leaderElection: {leaderElect: true, resourceName: trainer.kubeflow.org}
controller:
  groupKindConcurrency: {TrainJob.trainer.kubeflow.org: 5}
clientConnection: {qps: 50, burst: 100}
tls: {minVersion: "1.2", cipherSuites: [TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]}
`},
		"an empty file": {content: ""},
		"a misspelled field": {
			content: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nwebhooks: {port: 1}\n",
			wantErr: `invalid configuration: PATH: error unmarshaling JSON: while decoding JSON: json: unknown field "webhooks"`,
		},
		"another kind": {
			content: "apiVersion: v1\nkind: ConfigMap\n",
			wantErr: `invalid configuration: PATH: apiVersion/kind is "v1" "ConfigMap", want "config.trainer.kubeflow.org/v1alpha1" "Configuration"`,
		},
		"bad status server values": {
			content: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nstatusServer: {port: 0, qps: -1, burst: -2}\n",
			wantErr: `invalid configuration: [statusServer.port: Invalid value: 0: must be between 1 and 65535, ` +
				`statusServer.qps: Invalid value: -1: must not be negative, statusServer.burst: Invalid value: -2: must not be negative]`,
		},
		"the status server on the webhook port": {
			content: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nstatusServer: {port: 9443}\n",
			wantErr: `invalid configuration: statusServer.port: Invalid value: 9443: must differ from the port of webhook.port`,
		},
		"the status server on the metrics port": {
			content: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nstatusServer: {port: 8443}\n",
			wantErr: `invalid configuration: statusServer.port: Invalid value: 8443: must differ from the port of metrics.bindAddress`,
		},
		"bad values": {
			content: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nwebhook: {port: 70000}\n" +
				"controller: {groupKindConcurrency: {TrainJob.trainer.kubeflow.org: 0}}\nclientConnection: {qps: -1}\ntls: {minVersion: \"1.4\"}\n",
			wantErr: `invalid configuration: [webhook.port: Invalid value: 70000: must be between 1 and 65535, ` +
				`clientConnection.qps: Invalid value: -1: must not be negative, ` +
				`controller.groupKindConcurrency[TrainJob.trainer.kubeflow.org]: Invalid value: 0: must be at least 1, ` +
				`tls.minVersion: Invalid value: "1.4": must be one of 1.0, 1.1, 1.2, 1.3]`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := write(t, tc.content)
			cfg, err := Load(path)
			got := ""
			if err != nil {
				got = err.Error()
			}
			want := tc.wantErr
			if want != "" {
				want = strings.ReplaceAll(want, "PATH", path)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Load() error (-want,+got):\n%s", diff)
			}
			if err == nil && (cfg.Webhook.Port == nil || cfg.ClientConnection == nil) {
				t.Error("Load() did not apply defaults")
			}
		})
	}
	if _, err := Load(""); err != nil {
		t.Errorf("Load(\"\") = %v, want the defaults", err)
	}
}

func TestTLSConfig(t *testing.T) {
	c := &tls.Config{}
	TLSConfig(nil)(c)
	if diff := cmp.Diff([]string{"http/1.1"}, c.NextProtos); diff != "" {
		t.Errorf("HTTP/2 must be off by default (-want,+got):\n%s", diff)
	}
	c = &tls.Config{}
	TLSConfig(&configapi.TLSOptions{MinVersion: "1.3", NextProtos: []string{"h2", "http/1.1"}})(c)
	if diff := cmp.Diff([]any{uint16(tls.VersionTLS13), []string{"h2", "http/1.1"}}, []any{c.MinVersion, c.NextProtos}); diff != "" {
		t.Errorf("TLS options (-want,+got):\n%s", diff)
	}
}

func TestOptions(t *testing.T) {
	cfg, err := Load(write(t, `apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {port: 9999, host: 127.0.0.1}
metrics: {bindAddress: ":9090", secureServing: false}
health: {healthProbeBindAddress: ":9091", readinessEndpointName: ready, livenessEndpointName: alive}
leaderElection: {leaderElect: true, resourceName: gantry, resourceNamespace: ops, leaseDuration: 30s}
controller:
  groupKindConcurrency: {TrainJob.trainer.kubeflow.org: 5, TrainingRuntime.trainer.kubeflow.org: 1}
clientConnection: {qps: 200, burst: 400}
`))
	if err != nil {
		t.Fatal(err)
	}
	o := Options(cfg, nil, cert.NewPair("/certs"))
	webhookOpts := o.WebhookServer.(*webhook.DefaultServer).Options
	webhookTLS := &tls.Config{}
	for _, opt := range webhookOpts.TLSOpts {
		opt(webhookTLS)
	}
	_, servedErr := webhookTLS.GetCertificate(nil)
	got := map[string]any{
		"webhook":       fmt.Sprintf("%s:%d", webhookOpts.Host, webhookOpts.Port),
		"webhookCert":   servedErr.Error(),
		"metrics":       o.Metrics.BindAddress,
		"secure":        o.Metrics.SecureServing,
		"health":        o.HealthProbeBindAddress,
		"ready":         o.ReadinessEndpointName,
		"live":          o.LivenessEndpointName,
		"leaderElect":   o.LeaderElection,
		"leaseID":       o.LeaderElectionID,
		"leaseNS":       o.LeaderElectionNamespace,
		"leaseDuration": o.LeaseDuration.String(),
		"concurrency":   o.Controller.GroupKindConcurrency,
		"priorityQueue": *o.Controller.UsePriorityQueue,
		"shutdown":      o.GracefulShutdownTimeout.String(),
	}
	want := map[string]any{
		// The shared cert.Pair, not yet started.
		"webhook": "127.0.0.1:9999", "webhookCert": "the serving certificate is not loaded yet",
		"metrics": ":9090", "secure": false, "health": ":9091", "ready": "/ready", "live": "/alive",
		"leaderElect": true, "leaseID": "gantry", "leaseNS": "ops", "leaseDuration": "30s",
		"concurrency": map[string]int{"TrainJob.trainer.kubeflow.org": 5, "TrainingRuntime.trainer.kubeflow.org": 1},
		// Below a pod's 30 s grace period, so a stopping leader releases its lease before SIGKILL.
		"priorityQueue": false, "shutdown": "15s",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Options() (-want,+got):\n%s", diff)
	}
	rc := RESTConfig(cfg, &rest.Config{Host: "https://example"})
	if rc.QPS != 200 || rc.Burst != 400 {
		t.Errorf("RESTConfig() QPS %v burst %d, want 200 and 400", rc.QPS, rc.Burst)
	}
	// Gantry's defaults, not Kubeflow Trainer's 5 and 10 (25 TrainJobs reporting every 5 s): 250
	// reporting TrainJobs fit.
	rc = StatusServerRESTConfig(cfg, &rest.Config{Host: "https://example"})
	if rc.QPS != 50 || rc.Burst != 100 {
		t.Errorf("StatusServerRESTConfig() QPS %v burst %d, want the defaults 50 and 100", rc.QPS, rc.Burst)
	}
}

// Outside a pod (as here: no service account namespace file) the lease goes to the manager's
// namespace, kubeflow-system, instead of controller-runtime refusing to start.
func TestOptionsLeaseNamespace(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	o := Options(cfg, nil, cert.NewPair("/certs"))
	if diff := cmp.Diff([]any{true, "kubeflow-system"}, []any{o.LeaderElection, o.LeaderElectionNamespace}); diff != "" {
		t.Errorf("leader election and its namespace (-want,+got):\n%s", diff)
	}
}
