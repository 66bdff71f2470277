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

package main

import (
	"crypto/tls"
	"fmt"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/internal/features"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/internal/statusserver"
)

// Probe names of the status server, added to /healthz and /readyz.
const (
	statusServerHealthz = "status-server-healthz"
	statusServerReadyz  = "status-server-readyz"
)

// statusServer is what the TrainJobStatus feature adds to the manager.
type statusServer struct {
	server *statusserver.Server
	ca     *cert.CABundle
	url    func(namespace, name string) string
}

// setupStatusServer prepares the status server when the TrainJobStatus gate is on (nil
// otherwise): the cache of the CA Secret, the token verifier, the server's own rate-limited
// client (whose limits are also the server's write budget) and its probes. The server itself is added once the certificates exist.
func setupStatusServer(mgr ctrl.Manager, cfg *configapi.Configuration, s *apiruntime.Scheme, pair *cert.Pair) (*statusServer, error) {
	if !features.Enabled(features.TrainJobStatus) {
		return nil, nil
	}
	namespace := cert.OperatorNamespace()
	ca, err := cert.NewCABundle(mgr.GetConfig(), s, mgr.GetRESTMapper(),
		types.NamespacedName{Namespace: namespace, Name: cfg.CertManagement.WebhookSecretName})
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(ca.Cache()); err != nil {
		return nil, err
	}
	restConfig := config.StatusServerRESTConfig(cfg, mgr.GetConfig())
	verifier, err := statusserver.NewOIDCVerifier(restConfig)
	if err != nil {
		return nil, err
	}
	if err := mgr.Add(verifier); err != nil {
		return nil, err
	}
	c, err := client.New(restConfig, client.Options{Scheme: s, Mapper: mgr.GetRESTMapper()})
	if err != nil {
		return nil, fmt.Errorf("creating the status server's client: %w", err)
	}
	srv, err := statusserver.New(statusserver.Options{
		Addr:           fmt.Sprintf(":%d", *cfg.StatusServer.Port),
		GetCertificate: pair.GetCertificate,
		TLSOpts:        []func(*tls.Config){config.TLSConfig(cfg.TLS)},
		Verifier:       verifier,
		// Tokens are checked against the TrainJob in the manager's cache (every replica has
		// one): a report costs one write and no read.
		Applier: &statusserver.ClientApplier{Client: c, Reader: mgr.GetClient()},
		QPS:     restConfig.QPS,
		Burst:   restConfig.Burst,
	})
	if err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck(statusServerHealthz, srv.LiveCheck()); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck(statusServerReadyz, srv.ReadyCheck()); err != nil {
		return nil, err
	}
	return &statusServer{
		server: srv,
		ca:     ca,
		url:    trainjobstatus.URL(cfg.CertManagement.WebhookServiceName, namespace, *cfg.StatusServer.Port),
	}, nil
}
