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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
)

// Configuration configures the Gantry manager. Every field is optional; SetDefaults fills in what
// is missing.
//
// +kubebuilder:object:root=true
type Configuration struct {
	metav1.TypeMeta `json:",inline"`

	// webhook configures the admission webhook server.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	Webhook ControllerWebhook `json:"webhook,omitzero"`

	// leaderElection configures leader election of the controllers.
	// +optional
	LeaderElection *componentconfigv1alpha1.LeaderElectionConfiguration `json:"leaderElection,omitempty"`

	// metrics configures the Prometheus metrics server.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	Metrics ControllerMetrics `json:"metrics,omitzero"`

	// health configures the health probe server.
	// +optional
	// +kubebuilder:validation:MinProperties=1
	Health ControllerHealth `json:"health,omitzero"`

	// controller holds options shared by all controllers.
	// +optional
	Controller *ControllerConfigurationSpec `json:"controller,omitempty"`

	// certManagement configures the in-process rotation of the webhook certificates.
	// +optional
	CertManagement *CertManagement `json:"certManagement,omitempty"`

	// clientConnection configures the manager's API client.
	// +optional
	ClientConnection *ClientConnection `json:"clientConnection,omitempty"`

	// statusServer configures the server that training pods report progress to.
	// +optional
	StatusServer *StatusServer `json:"statusServer,omitempty"`

	// featureGates turns features on or off by name; --feature-gates overrides it.
	// +optional
	FeatureGates map[string]bool `json:"featureGates,omitempty"`

	// tls configures the TLS of the webhook, metrics and status servers.
	// +optional
	TLS *TLSOptions `json:"tls,omitempty"`
}

// ControllerWebhook configures the webhook server.
type ControllerWebhook struct {
	// port the webhook server listens on. Defaults to 9443.
	// +optional
	Port *int32 `json:"port,omitempty"`

	// host the webhook server binds to. Defaults to "" (all interfaces).
	// +optional
	Host *string `json:"host,omitempty"`
}

// ControllerMetrics configures the metrics server.
type ControllerMetrics struct {
	// bindAddress of the metrics server; "0" disables it. Defaults to ":8443".
	// +optional
	// +kubebuilder:validation:MinLength=1
	BindAddress string `json:"bindAddress,omitempty"`

	// secureServing serves metrics over HTTPS. Defaults to true.
	// +optional
	SecureServing *bool `json:"secureServing,omitempty"`

	// auth protects the metrics endpoint with authentication and authorization.
	// +optional
	Auth *MetricsAuth `json:"auth,omitempty"`
}

// MetricsAuth configures authentication and authorization of the metrics endpoint.
type MetricsAuth struct {
	// enabled checks every scrape with a TokenReview and a SubjectAccessReview. Defaults to true:
	// false serves metrics to anyone who reaches the port.
	// +optional
	Enabled *bool `json:"enabled,omitempty"`
}

// ControllerHealth configures the health probe server.
type ControllerHealth struct {
	// healthProbeBindAddress of the probe server; "0" disables it. Defaults to ":8081".
	// +optional
	// +kubebuilder:validation:MinLength=1
	HealthProbeBindAddress string `json:"healthProbeBindAddress,omitempty"`

	// readinessEndpointName is the readiness path. Defaults to "readyz".
	// +optional
	// +kubebuilder:validation:MinLength=1
	ReadinessEndpointName string `json:"readinessEndpointName,omitempty"`

	// livenessEndpointName is the liveness path. Defaults to "healthz".
	// +optional
	// +kubebuilder:validation:MinLength=1
	LivenessEndpointName string `json:"livenessEndpointName,omitempty"`
}

// ControllerConfigurationSpec holds options shared by all controllers.
type ControllerConfigurationSpec struct {
	// groupKindConcurrency maps a GroupKind string such as "TrainJob.trainer.kubeflow.org" to the
	// number of concurrent reconciles of that kind's controller (at least 1).
	// +optional
	GroupKindConcurrency map[string]int32 `json:"groupKindConcurrency,omitempty"`
}

// CertManagement configures the webhook certificates.
type CertManagement struct {
	// enable rotates the certificates in-process. With false, they must be provided externally.
	// Defaults to true.
	// +optional
	Enable *bool `json:"enable,omitempty"`

	// webhookServiceName is the Service whose DNS name the certificate covers.
	// Defaults to "kubeflow-trainer-controller-manager".
	// +optional
	// +kubebuilder:validation:MinLength=1
	WebhookServiceName string `json:"webhookServiceName,omitempty"`

	// webhookSecretName is the Secret that stores the CA and the serving certificate.
	// Defaults to "kubeflow-trainer-webhook-cert".
	// +optional
	// +kubebuilder:validation:MinLength=1
	WebhookSecretName string `json:"webhookSecretName,omitempty"`
}

// ClientConnection configures the manager's API client.
type ClientConnection struct {
	// qps is the sustained request rate allowed to the API server, per resource the client
	// writes. Defaults to 500 (Kubeflow Trainer: 50, which throttles a burst of TrainJobs while
	// the apiserver has room; its priority and fairness still applies).
	// +optional
	QPS *float32 `json:"qps,omitempty"`

	// burst is the request burst allowed above qps. Defaults to 1000.
	// +optional
	Burst *int32 `json:"burst,omitempty"`
}

// StatusServer configures the TrainJob status server.
type StatusServer struct {
	// port the status server listens on. Defaults to 10443.
	// +optional
	Port *int32 `json:"port,omitempty"`

	// qps of the status server's own API client, which is also its write budget: reports beyond
	// it are answered 429. Defaults to 50, 250 TrainJobs reporting every 5 s (Kubeflow Trainer:
	// 5, which 25 such TrainJobs use up).
	// +optional
	QPS *float32 `json:"qps,omitempty"`

	// burst of the status server's own API client. Defaults to 100 (Kubeflow Trainer: 10).
	// +optional
	Burst *int32 `json:"burst,omitempty"`
}

// TLSOptions configures the TLS of the servers the manager runs.
type TLSOptions struct {
	// minVersion is the lowest TLS version accepted: "1.0", "1.1", "1.2" or "1.3".
	// +optional
	// +kubebuilder:validation:MinLength=1
	MinVersion string `json:"minVersion,omitempty"`

	// cipherSuites are the accepted cipher suites, by their IANA names. Empty means Go's defaults.
	// +optional
	// +listType=atomic
	CipherSuites []string `json:"cipherSuites,omitempty"`

	// nextProtos are the ALPN protocols offered. Empty means ["http/1.1"]: HTTP/2 stays off
	// unless asked for (CVE-2023-44487, CVE-2023-39325).
	// +optional
	// +listType=atomic
	NextProtos []string `json:"nextProtos,omitempty"`
}
