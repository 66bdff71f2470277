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
	"cmp"
	"crypto/tls"
	"fmt"
	"net/http"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/kubeauth"
	gantrymetrics "github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// CertDir is where the webhook server reads its certificate, and where in-process rotation
// writes it, unless the manager's --webhook-cert-dir says otherwise.
const CertDir = "/tmp/k8s-webhook-server/serving-certs"

// GracefulShutdownTimeout bounds how long a stopping manager waits for its runnables before it
// releases its lease and exits. It stays well below a pod's default 30 s grace period: were a
// runnable ever stuck, the kubelet's SIGKILL would otherwise come first, the lease would not be
// released, and the standby would wait for it to expire.
const GracefulShutdownTimeout = 15 * time.Second

// Leader election reads and renews its Lease by name (the installed leaderElection
// resourceName and resourceNamespace; the chart renders the configured ones) and creates it
// once; scrape authentication, when metrics.auth.enabled is set, reviews every token and access.
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kubeflow-system,resources=leases,verbs=create
// +kubebuilder:rbac:groups=coordination.k8s.io,namespace=kubeflow-system,resources=leases,resourceNames=trainer.kubeflow.org,verbs=get;update
// +kubebuilder:rbac:groups=authentication.k8s.io,resources=tokenreviews,verbs=create
// +kubebuilder:rbac:groups=authorization.k8s.io,resources=subjectaccessreviews,verbs=create

// Options turns a defaulted, valid Configuration into manager options; the webhook server serves
// the certificate of pair, which the caller starts.
func Options(cfg *configapi.Configuration, scheme *runtime.Scheme, pair *cert.Pair) ctrl.Options {
	tlsOpts := []func(*tls.Config){TLSConfig(cfg.TLS)}
	metrics := metricsserver.Options{
		BindAddress:   cfg.Metrics.BindAddress,
		SecureServing: *cfg.Metrics.SecureServing,
		TLSOpts:       tlsOpts,
	}
	if *cfg.Metrics.Auth.Enabled {
		metrics.FilterProvider = metricsAuth
	}
	le := cfg.LeaderElection
	return ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metrics,
		HealthProbeBindAddress:        cfg.Health.HealthProbeBindAddress,
		ReadinessEndpointName:         "/" + cfg.Health.ReadinessEndpointName,
		LivenessEndpointName:          "/" + cfg.Health.LivenessEndpointName,
		LeaderElection:                *le.LeaderElect,
		LeaderElectionID:              le.ResourceName,
		LeaderElectionNamespace:       leaseNamespace(le.ResourceNamespace),
		LeaderElectionResourceLock:    le.ResourceLock,
		LeaseDuration:                 ptr.To(le.LeaseDuration.Duration),
		RenewDeadline:                 ptr.To(le.RenewDeadline.Duration),
		RetryPeriod:                   ptr.To(le.RetryPeriod.Duration),
		LeaderElectionReleaseOnCancel: true,
		GracefulShutdownTimeout:       ptr.To(GracefulShutdownTimeout),
		WebhookServer: webhook.NewServer(webhook.Options{
			Port:    int(*cfg.Webhook.Port),
			Host:    *cfg.Webhook.Host,
			TLSOpts: append([]func(*tls.Config){pair.TLSOpt, gantrymetrics.CountHandshakes(gantrymetrics.WebhookTLSHandshakes)}, tlsOpts...),
		}),
		Controller: ctrlconfig.Controller{
			GroupKindConcurrency: toInt(cfg.Controller.GroupKindConcurrency),
			// controller-runtime v0.24's priority queue can deadlock at shutdown (a ready item
			// sent to a worker that already left, with the queue's locks held; fixed in v0.25.3),
			// so the controller never stops; TestControllerStopsWithABusyQueue catches it.
			UsePriorityQueue: ptr.To(false),
		},
		Cache: CacheOptions(),
	}
}

// leaseNamespace is the configured namespace of the leader election lease, else the manager's own
// (cert.OperatorNamespace, where its certificates live too): controller-runtime alone finds it
// only inside a pod, so a manager run against a cluster from outside would not start.
func leaseNamespace(configured string) string {
	return cmp.Or(configured, cert.OperatorNamespace())
}

// CacheOptions restrict the ConfigMap and Secret informers to the objects Gantry created, which
// carry the TrainJob label: the manager's memory then does not grow with unrelated objects. Cached
// objects drop their managedFields, which nothing reads and which are about as large as an
// applied object itself (a JobSet's field set lists every field of its pod templates), and
// JobSets what the controller does not read (cached.Transform).
func CacheOptions() cache.Options {
	req, err := labels.NewRequirement(core.TrainJobNameLabel, selection.Exists, nil)
	if err != nil {
		panic(err)
	}
	owned := cache.ByObject{Label: labels.NewSelector().Add(*req)}
	return cache.Options{
		ByObject: map[client.Object]cache.ByObject{
			&corev1.ConfigMap{}: owned,
			&corev1.Secret{}:    owned,
		},
		// A default, not a JobSet entry: an entry would need the JobSet CRD to create the
		// manager, which then could not say that JobSet is missing.
		DefaultTransform: cached.Transform,
	}
}

// RESTConfig applies the client rate limits.
func RESTConfig(cfg *configapi.Configuration, rc *rest.Config) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.QPS = *cfg.ClientConnection.QPS
	rc.Burst = int(*cfg.ClientConnection.Burst)
	return rc
}

// StatusServerRESTConfig applies the status server's own client rate limits: progress reports
// from many pods must not use up the controllers' budget.
func StatusServerRESTConfig(cfg *configapi.Configuration, rc *rest.Config) *rest.Config {
	rc = rest.CopyConfig(rc)
	rc.QPS = *cfg.StatusServer.QPS
	rc.Burst = int(*cfg.StatusServer.Burst)
	return rc
}

// TLSConfig applies the tls options: minimum version, cipher suites, and ALPN protocols, with
// HTTP/2 off unless asked for (CVE-2023-44487, CVE-2023-39325).
func TLSConfig(opts *configapi.TLSOptions) func(*tls.Config) {
	return func(c *tls.Config) {
		c.NextProtos = []string{"http/1.1"}
		if opts == nil {
			return
		}
		if v, err := TLSVersion(opts.MinVersion); err == nil && v != 0 {
			c.MinVersion = v
		}
		if ids, err := CipherSuites(opts.CipherSuites); err == nil && len(ids) > 0 {
			c.CipherSuites = ids
		}
		if len(opts.NextProtos) > 0 {
			c.NextProtos = opts.NextProtos
		}
	}
}

func toInt(m map[string]int32) map[string]int {
	out := make(map[string]int, len(m))
	for k, v := range m {
		out[k] = int(v)
	}
	return out
}

// metricsAuth checks each scrape with a TokenReview and a SubjectAccessReview (kubeauth), as
// controller-runtime's filters.WithAuthenticationAndAuthorization does, without linking the
// apiserver's authentication libraries and cel-go into the manager: 10 MB of its binary and
// about 6 MiB of its resident memory.
func metricsAuth(cfg *rest.Config, hc *http.Client) (metricsserver.Filter, error) {
	client, err := kubeauth.NewReviewClient(cfg, hc)
	if err != nil {
		return nil, fmt.Errorf("creating the metrics endpoint's review client: %w", err)
	}
	rv := kubeauth.NewReviewer(client)
	return func(log logr.Logger, next http.Handler) (http.Handler, error) {
		return rv.Filter(log, next), nil
	}, nil
}
