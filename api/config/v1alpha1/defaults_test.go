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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	componentconfigv1alpha1 "k8s.io/component-base/config/v1alpha1"
	"k8s.io/utils/ptr"
)

func defaulted() Configuration {
	return Configuration{
		Webhook: ControllerWebhook{Port: ptr.To[int32](9443), Host: ptr.To("")},
		Metrics: ControllerMetrics{
			BindAddress:   ":8443",
			SecureServing: ptr.To(true),
			Auth:          &MetricsAuth{Enabled: ptr.To(true)},
		},
		Health: ControllerHealth{
			HealthProbeBindAddress: ":8081",
			ReadinessEndpointName:  "readyz",
			LivenessEndpointName:   "healthz",
		},
		LeaderElection: &componentconfigv1alpha1.LeaderElectionConfiguration{
			LeaderElect:   ptr.To(true),
			ResourceLock:  "leases",
			ResourceName:  "trainer.kubeflow.org",
			LeaseDuration: metav1.Duration{Duration: 15 * time.Second},
			RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod:   metav1.Duration{Duration: 1 * time.Second},
		},
		Controller: &ControllerConfigurationSpec{GroupKindConcurrency: map[string]int32{"TrainJob.trainer.kubeflow.org": 100}},
		CertManagement: &CertManagement{
			Enable:             ptr.To(true),
			WebhookServiceName: "kubeflow-trainer-controller-manager",
			WebhookSecretName:  "kubeflow-trainer-webhook-cert",
		},
		ClientConnection: &ClientConnection{QPS: ptr.To[float32](500), Burst: ptr.To[int32](1000)},
		StatusServer:     &StatusServer{Port: ptr.To[int32](10443), QPS: ptr.To[float32](50), Burst: ptr.To[int32](100)},
	}
}

func TestSetDefaults(t *testing.T) {
	cases := map[string]struct {
		cfg  Configuration
		want Configuration
	}{
		"empty configuration gets every default": {
			want: defaulted(),
		},
		"explicit values are kept, even zero and false ones": {
			cfg: Configuration{
				Webhook:          ControllerWebhook{Port: ptr.To[int32](10250), Host: ptr.To("127.0.0.1")},
				Metrics:          ControllerMetrics{BindAddress: "0", SecureServing: ptr.To(false)},
				LeaderElection:   &componentconfigv1alpha1.LeaderElectionConfiguration{LeaderElect: ptr.To(false)},
				CertManagement:   &CertManagement{Enable: ptr.To(false), WebhookSecretName: "my-cert"},
				ClientConnection: &ClientConnection{QPS: ptr.To[float32](-1)},
				FeatureGates:     map[string]bool{"TrainJobStatus": false},
			},
			want: func() Configuration {
				c := defaulted()
				c.Webhook = ControllerWebhook{Port: ptr.To[int32](10250), Host: ptr.To("127.0.0.1")}
				c.Metrics.BindAddress = "0"
				c.Metrics.SecureServing = ptr.To(false)
				c.LeaderElection.LeaderElect = ptr.To(false)
				c.CertManagement.Enable = ptr.To(false)
				c.CertManagement.WebhookSecretName = "my-cert"
				c.ClientConnection.QPS = ptr.To[float32](-1)
				c.FeatureGates = map[string]bool{"TrainJobStatus": false}
				return c
			}(),
		},
		"a configured TrainJob concurrency is kept, other kinds keep controller-runtime's default": {
			cfg: Configuration{Controller: &ControllerConfigurationSpec{GroupKindConcurrency: map[string]int32{
				"TrainJob.trainer.kubeflow.org": 2, "TrainingRuntime.trainer.kubeflow.org": 3,
			}}},
			want: func() Configuration {
				c := defaulted()
				c.Controller.GroupKindConcurrency = map[string]int32{"TrainJob.trainer.kubeflow.org": 2, "TrainingRuntime.trainer.kubeflow.org": 3}
				return c
			}(),
		},
		"partial leader election is completed": {
			cfg: Configuration{LeaderElection: &componentconfigv1alpha1.LeaderElectionConfiguration{
				ResourceNamespace: "kubeflow-system",
				LeaseDuration:     metav1.Duration{Duration: time.Minute},
			}},
			want: func() Configuration {
				c := defaulted()
				c.LeaderElection.ResourceNamespace = "kubeflow-system"
				c.LeaderElection.LeaseDuration = metav1.Duration{Duration: time.Minute}
				return c
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.cfg
			SetDefaults(&got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("SetDefaults() mismatch (-want,+got):\n%s", diff)
			}
		})
	}
}
