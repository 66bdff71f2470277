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

package v1alpha1

import (
	"cmp"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

// Defaults of the Configuration. The names match Kubeflow Trainer's, so an existing trainer
// configuration means the same thing to Gantry; the values do too, except the client rate limits
// and the TrainJob concurrency, which `make bench` showed to hold Gantry back (README,
// Performance).
const (
	DefaultWebhookPort                 int32   = 9443
	DefaultMetricsBindAddress                  = ":8443"
	DefaultHealthProbeBindAddress              = ":8081"
	DefaultReadinessEndpointName               = "readyz"
	DefaultLivenessEndpointName                = "healthz"
	DefaultWebhookServiceName                  = "kubeflow-trainer-controller-manager"
	DefaultWebhookSecretName                   = "kubeflow-trainer-webhook-cert"
	DefaultClientConnectionQPS         float32 = 500
	DefaultClientConnectionBurst       int32   = 1000
	DefaultStatusServerPort            int32   = 10443
	DefaultStatusServerQPS             float32 = 50
	DefaultStatusServerBurst           int32   = 100
	DefaultLeaderElectionID                    = "trainer.kubeflow.org"
	DefaultLeaderElectionLeaseDuration         = 15 * time.Second
	DefaultLeaderElectionRenewDeadline         = 10 * time.Second
	// DefaultLeaderElectionRetryPeriod is 1 s, not client-go's 2 s: a candidate sees the lease
	// expire and takes it at its next try, and tries spaced 2 to 4.4 s apart put the median
	// takeover after a crashed leader at 17.3 s and one in ten past 19.5 s; 1 s puts them at 16.2
	// and 17.2 s, for one lease renewal a second.
	DefaultLeaderElectionRetryPeriod  = 1 * time.Second
	DefaultLeaderElectionResourceLock = "leases"
)

// TrainJobGroupKind is the controller.groupKindConcurrency key of the TrainJob controller.
const TrainJobGroupKind = "TrainJob.trainer.kubeflow.org"

// DefaultTrainJobConcurrency is Gantry's own default (controller-runtime's is 1). A reconcile
// mostly waits on the apiserver, and a new TrainJob costs it two or three writes, so the
// controller needs two or three times the workers of the clients submitting to keep pace: in
// `make bench` (10 clients, 1,000 TrainJobs, two writes each) the median wait for a JobSet was
// about 5 s with 1 worker, 1.5 s with 10 and 0.1 s with 20 or 40; with three writes, 1.5 s with
// 20 and 0.26 s with 40. At 16 clients 40 were too few again: the reconciles queued (p50 wait
// 0.5-0.6 s) and the p99 from TrainJob to JobSet was 1.39-1.88 s; with 100 the queue is empty at
// the median and the p99 0.74-1.43 s, for the same CPU and memory (docs/performance.md).
const DefaultTrainJobConcurrency int32 = 100

// SetDefaults fills every unset field of cfg with its default.
func SetDefaults(cfg *Configuration) {
	setPtr(&cfg.Webhook.Port, DefaultWebhookPort)
	setPtr(&cfg.Webhook.Host, "")
	cfg.Metrics.BindAddress = cmp.Or(cfg.Metrics.BindAddress, DefaultMetricsBindAddress)
	setPtr(&cfg.Metrics.SecureServing, true)
	if cfg.Metrics.Auth == nil {
		cfg.Metrics.Auth = &MetricsAuth{}
	}
	setPtr(&cfg.Metrics.Auth.Enabled, true)
	cfg.Health.HealthProbeBindAddress = cmp.Or(cfg.Health.HealthProbeBindAddress, DefaultHealthProbeBindAddress)
	cfg.Health.ReadinessEndpointName = cmp.Or(cfg.Health.ReadinessEndpointName, DefaultReadinessEndpointName)
	cfg.Health.LivenessEndpointName = cmp.Or(cfg.Health.LivenessEndpointName, DefaultLivenessEndpointName)
	setLeaderElectionDefaults(cfg)
	if cfg.Controller == nil {
		cfg.Controller = &ControllerConfigurationSpec{}
	}
	if _, set := cfg.Controller.GroupKindConcurrency[TrainJobGroupKind]; !set {
		if cfg.Controller.GroupKindConcurrency == nil {
			cfg.Controller.GroupKindConcurrency = map[string]int32{}
		}
		cfg.Controller.GroupKindConcurrency[TrainJobGroupKind] = DefaultTrainJobConcurrency
	}
	if cfg.CertManagement == nil {
		cfg.CertManagement = &CertManagement{}
	}
	setPtr(&cfg.CertManagement.Enable, true)
	cfg.CertManagement.WebhookServiceName = cmp.Or(cfg.CertManagement.WebhookServiceName, DefaultWebhookServiceName)
	cfg.CertManagement.WebhookSecretName = cmp.Or(cfg.CertManagement.WebhookSecretName, DefaultWebhookSecretName)
	if cfg.ClientConnection == nil {
		cfg.ClientConnection = &ClientConnection{}
	}
	setPtr(&cfg.ClientConnection.QPS, DefaultClientConnectionQPS)
	setPtr(&cfg.ClientConnection.Burst, DefaultClientConnectionBurst)
	if cfg.StatusServer == nil {
		cfg.StatusServer = &StatusServer{}
	}
	setPtr(&cfg.StatusServer.Port, DefaultStatusServerPort)
	setPtr(&cfg.StatusServer.QPS, DefaultStatusServerQPS)
	setPtr(&cfg.StatusServer.Burst, DefaultStatusServerBurst)
}

// setLeaderElectionDefaults turns leader election on unless the file says otherwise: two replicas
// reconciling the same TrainJobs would fight over their JobSets.
func setLeaderElectionDefaults(cfg *Configuration) {
	if cfg.LeaderElection == nil {
		cfg.LeaderElection = &componentconfigv1alpha1.LeaderElectionConfiguration{}
	}
	le := cfg.LeaderElection
	setPtr(&le.LeaderElect, true)
	le.ResourceLock = cmp.Or(le.ResourceLock, DefaultLeaderElectionResourceLock)
	le.ResourceName = cmp.Or(le.ResourceName, DefaultLeaderElectionID)
	le.LeaseDuration = durationOr(le.LeaseDuration, DefaultLeaderElectionLeaseDuration)
	le.RenewDeadline = durationOr(le.RenewDeadline, DefaultLeaderElectionRenewDeadline)
	le.RetryPeriod = durationOr(le.RetryPeriod, DefaultLeaderElectionRetryPeriod)
}

func durationOr(d metav1.Duration, def time.Duration) metav1.Duration {
	return metav1.Duration{Duration: cmp.Or(d.Duration, def)}
}

// setPtr sets *p to def when the field is unset; an explicit value, even a zero one, is kept.
func setPtr[T any](p **T, def T) {
	if *p == nil {
		*p = ptr.To(def)
	}
}
