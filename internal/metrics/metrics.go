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

// Package metrics holds Gantry's own Prometheus metrics, prefixed kubeflow_trainer_, served next
// to controller-runtime's on the manager's metrics endpoint.
package metrics

import (
	"context"
	"crypto/tls"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Reconcile error reasons.
const (
	ReasonRuntimeNotFound = "RuntimeNotFound"
	ReasonBuildFailed     = "BuildFailed"
	ReasonApplyFailed     = "ApplyFailed"
	ReasonStatusFailed    = "StatusUpdateFailed"
)

var (
	// ReconcileErrors counts failed TrainJob reconciles by reason.
	ReconcileErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kubeflow_trainer_reconcile_errors_total",
		Help: "Failed TrainJob reconciles, by reason.",
	}, []string{"reason"})

	// JobSetCreationSeconds is the time from a TrainJob's creation to its JobSet's.
	JobSetCreationSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "kubeflow_trainer_trainjob_jobset_creation_seconds",
		Help:    "Time from TrainJob creation to the creation of its JobSet.",
		Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
	})

	// DurationSeconds is the time from a TrainJob's creation to its end, by outcome.
	DurationSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kubeflow_trainer_trainjob_duration_seconds",
		Help:    "Time from TrainJob creation to Complete or Failed.",
		Buckets: prometheus.ExponentialBuckets(10, 2, 16),
	}, []string{"outcome"})

	// TTLDeletions counts the finished TrainJobs deleted at the end of their TTL (a Gantry
	// addition, hence the gantry_ prefix).
	TTLDeletions = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gantry_trainjob_ttl_deletions_total",
		Help: "Finished TrainJobs deleted at the end of their ttl.gantry.dev/seconds-after-finished.",
	})

	// WebhookTLSHandshakes counts the TLS handshakes the webhook server began. Beside
	// controller_runtime_webhook_requests_total it shows whether the apiserver reuses its
	// connections: a handshake costs both sides far more CPU than the admission call itself.
	WebhookTLSHandshakes = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gantry_webhook_tls_handshakes_total",
		Help: "TLS handshakes (ClientHellos) the webhook server began.",
	})
)

// CountHandshakes makes a TLS server count in c every handshake a client begins, keeping any
// GetConfigForClient set before it.
func CountHandshakes(c prometheus.Counter) func(*tls.Config) {
	return func(cfg *tls.Config) {
		next := cfg.GetConfigForClient
		cfg.GetConfigForClient = func(hello *tls.ClientHelloInfo) (*tls.Config, error) {
			c.Inc()
			if next != nil {
				return next(hello)
			}
			return nil, nil
		}
	}
}

// Register adds the metrics, and a collector of TrainJobs by state and runtime read from reader
// (the manager's cache) at scrape time, to controller-runtime's registry.
func Register(reader client.Reader) error {
	// The registry is the process's; a later manager (a restart inside one process, as tests do)
	// points the one collector at its own cache, since the earlier cache never answers again.
	states.reader.Store(&reader)
	for _, c := range []prometheus.Collector{ReconcileErrors, JobSetCreationSeconds, DurationSeconds, TTLDeletions, WebhookTLSHandshakes, states} {
		if err := ctrlmetrics.Registry.Register(c); err != nil {
			if _, already := err.(prometheus.AlreadyRegisteredError); !already { //nolint:errorlint // the registry returns this type unwrapped
				return err
			}
		}
	}
	return nil
}

// ObserveFinished records the duration of a TrainJob that just finished.
func ObserveFinished(tj *trainer.TrainJob, status *trainer.TrainJobStatus, now time.Time) {
	if outcome, _ := trainjob.Outcome(status); outcome != "" {
		DurationSeconds.WithLabelValues(string(outcome)).Observe(now.Sub(tj.CreationTimestamp.Time).Seconds())
	}
}

var trainJobsDesc = prometheus.NewDesc("kubeflow_trainer_trainjobs",
	"TrainJobs managed by this controller, by state (as gantry list shows it) and runtime.", []string{"state", "runtime_kind", "runtime"}, nil)

// stateCollector counts TrainJobs at scrape time, so the gauge never drifts from the cluster.
type stateCollector struct {
	reader atomic.Pointer[client.Reader]
}

var states = &stateCollector{}

// collectTimeout bounds a scrape's read of the cache, which waits while the cache is not synced.
const collectTimeout = 5 * time.Second

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) { ch <- trainJobsDesc }

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	list := &trainer.TrainJobList{}
	reader := c.reader.Load()
	if reader == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), collectTimeout)
	defer cancel()
	if err := (*reader).List(ctx, list); err != nil {
		ch <- prometheus.NewInvalidMetric(trainJobsDesc, err)
		return
	}
	type key struct{ state, kind, runtime string }
	counts := map[key]int{}
	for i := range list.Items {
		tj := &list.Items[i]
		if !trainjob.ManagedByGantry(tj) {
			continue
		}
		// The TrainJob's own state (its Workload and pods are not read here: a scrape reads the
		// cache only), in the words the command line and the UI use.
		k := key{string(trainjob.DeriveState(tj, nil, nil).State), trainjob.RuntimeKind(tj), tj.Spec.RuntimeRef.Name}
		counts[k]++
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(trainJobsDesc, prometheus.GaugeValue, float64(n), k.state, k.kind, k.runtime)
	}
}
