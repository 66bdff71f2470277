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
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gantry-ml/gantry/internal/cert"
)

// TestMetricsAuthenticatedByDefault: with no configuration the metrics endpoint is served over
// HTTPS and refuses a scrape without a token (it would hand anyone in the cluster the names and
// counts of every TrainJob's reconciles); metrics.auth.enabled: false is the documented opt-out.
func TestMetricsAuthenticatedByDefault(t *testing.T) {
	cases := map[string]struct {
		config string
		want   int
	}{
		"no configuration": {want: http.StatusUnauthorized},
		"the opt-out": {config: "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\nmetrics: {auth: {enabled: false}}\n",
			want: http.StatusOK},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := ""
			if tc.config != "" {
				path = write(t, tc.config)
			}
			cfg, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			code, err := scrapeAnonymously(t, cfg.Metrics.BindAddress, Options(cfg, nil, cert.NewPair(t.TempDir())).Metrics)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, code); diff != "" {
				t.Errorf("an anonymous HTTPS scrape's status (-want,+got):\n%s", diff)
			}
		})
	}
}

// scrapeAnonymously serves opts on a free loopback port (the configured address is checked to
// be the default) and GETs /metrics over HTTPS without a token. The reviews would go to an
// apiserver that is not there: a scrape without a token never reaches them.
func scrapeAnonymously(t *testing.T, configured string, opts metricsserver.Options) (int, error) {
	if configured != ":8443" {
		return 0, fmt.Errorf("metrics.bindAddress %q, want the default :8443", configured)
	}
	opts.BindAddress = "127.0.0.1:0"
	srv, err := metricsserver.NewServer(opts, &rest.Config{Host: "https://127.0.0.1:1"}, http.DefaultClient)
	if err != nil {
		return 0, err
	}
	go func() { _ = srv.Start(t.Context()) }()
	bound, ok := srv.(interface{ GetBindAddr() string })
	if !ok {
		return 0, errors.New("the metrics server does not tell its address")
	}
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // its self-signed certificate; the client is what is checked
	}}
	for deadline := time.Now().Add(10 * time.Second); ; {
		if addr := bound.GetBindAddr(); addr != "" {
			resp, err := hc.Get("https://" + addr + "/metrics")
			if err == nil {
				_ = resp.Body.Close()
				return resp.StatusCode, nil
			}
			if time.Now().After(deadline) {
				return 0, err
			}
		} else if time.Now().After(deadline) {
			return 0, errors.New("the metrics server did not start")
		}
		time.Sleep(20 * time.Millisecond) // polling for the server to listen; no event to wait on
	}
}
