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

package install

import (
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/test/util"
)

// rendered holds the objects of one chart rendering that must agree with each other.
type rendered struct {
	cfg        *configapi.Configuration
	deployment appsv1.Deployment
	service    corev1.Service
	secrets    []string
	webhooks   []admissionv1.WebhookClientConfig
	// certificates are the cert-manager Certificates: their Secret and DNS names.
	certificates map[string][]string
	// injectCA are the webhook configurations' cainjector annotations.
	injectCA []string
}

func render(args ...string) rendered {
	return renderIn("ml-system", args...)
}

func renderIn(ns string, args ...string) rendered {
	objs, err := util.HelmTemplate(ns, args...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var r rendered
	for _, o := range objs {
		if o.GetLabels()["app.kubernetes.io/part-of"] != "gantry" {
			continue // JobSet's objects
		}
		switch o.GetKind() {
		case "ConfigMap":
			if data, ok, _ := unstructured.NestedString(o.Object, "data", "controller_manager_config.yaml"); ok {
				// The manager reads this file with a strict decoder and validates it.
				path := filepath.Join(ginkgo.GinkgoT().TempDir(), "config.yaml")
				gomega.Expect(os.WriteFile(path, []byte(data), 0o600)).To(gomega.Succeed())
				r.cfg, err = config.Load(path)
				gomega.Expect(err).NotTo(gomega.HaveOccurred(), data)
			}
		case "Deployment":
			fromUnstructured(o, &r.deployment)
		case "Service":
			fromUnstructured(o, &r.service)
		case "Secret":
			r.secrets = append(r.secrets, o.GetName())
		case "Certificate":
			secret, _, _ := unstructured.NestedString(o.Object, "spec", "secretName")
			dnsNames, _, _ := unstructured.NestedStringSlice(o.Object, "spec", "dnsNames")
			if r.certificates == nil {
				r.certificates = map[string][]string{}
			}
			r.certificates[secret] = dnsNames
		case "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration":
			if ca, ok := o.GetAnnotations()["cert-manager.io/inject-ca-from"]; ok {
				r.injectCA = append(r.injectCA, ca)
			}
			var whc admissionv1.ValidatingWebhookConfiguration // both kinds share the webhooks' clientConfig shape
			fromUnstructured(o, &whc)
			for _, w := range whc.Webhooks {
				r.webhooks = append(r.webhooks, w.ClientConfig)
			}
		}
	}
	gomega.Expect(r.cfg).NotTo(gomega.BeNil(), "the chart renders the manager's Configuration")
	return r
}

func fromUnstructured(o *unstructured.Unstructured, into any) {
	gomega.Expect(runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, into)).To(gomega.Succeed())
}

func containerPort(d appsv1.Deployment, name string) int32 {
	for _, p := range d.Spec.Template.Spec.Containers[0].Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}

// expectAgreement checks what the manager relies on at run time: the certificate it issues names
// the Service the webhooks call, in the Secret the Deployment mounts; the ports it listens on are
// the ones the container and the Service expose.
func expectAgreement(r rendered) {
	cm := r.cfg.CertManagement
	gomega.Expect(r.service.Name).To(gomega.Equal(cm.WebhookServiceName))
	gomega.Expect(r.webhooks).To(gomega.HaveLen(5), "the TrainJob defaulter and the validators of TrainJobs, both runtimes and OptimizationJobs")
	for _, w := range r.webhooks {
		gomega.Expect(w.Service.Name).To(gomega.Equal(cm.WebhookServiceName))
		gomega.Expect(w.Service.Namespace).To(gomega.Equal("ml-system"))
	}
	var mounted string
	for _, v := range r.deployment.Spec.Template.Spec.Volumes {
		if v.Name == "webhook-cert" {
			mounted = v.Secret.SecretName
		}
	}
	gomega.Expect(mounted).To(gomega.Equal(cm.WebhookSecretName))
	if *cm.Enable {
		gomega.Expect(r.secrets).To(gomega.ContainElement(cm.WebhookSecretName))
	}
	gomega.Expect(containerPort(r.deployment, "webhook")).To(gomega.Equal(*r.cfg.Webhook.Port))
	gomega.Expect(containerPort(r.deployment, "status-server")).To(gomega.Equal(*r.cfg.StatusServer.Port))
	gomega.Expect(r.cfg.LeaderElection.ResourceNamespace).To(gomega.Equal("ml-system"))
	names := map[string]bool{}
	for _, p := range r.deployment.Spec.Template.Spec.Containers[0].Ports {
		names[p.Name] = true
	}
	for _, p := range r.service.Spec.Ports {
		gomega.Expect(names).To(gomega.HaveKey(p.TargetPort.StrVal), "Service port %s", p.Name)
	}
	gomega.Expect(r.service.Spec.Selector).To(gomega.Equal(r.deployment.Spec.Selector.MatchLabels))
}

var _ = ginkgo.Describe("The chart's manager Configuration", func() {
	ginkgo.It("is accepted by the manager and keeps the names the code defaults to", func() {
		r := render()
		expectAgreement(r)
		gomega.Expect(r.cfg.CertManagement.WebhookServiceName).To(gomega.Equal(configapi.DefaultWebhookServiceName))
		gomega.Expect(r.cfg.CertManagement.WebhookSecretName).To(gomega.Equal(configapi.DefaultWebhookSecretName))
		gomega.Expect(r.cfg.Controller.GroupKindConcurrency).To(gomega.Equal(map[string]int32{
			configapi.TrainJobGroupKind: configapi.DefaultTrainJobConcurrency, "TrainingRuntime.trainer.kubeflow.org": 1,
			"ClusterTrainingRuntime.trainer.kubeflow.org": 1,
		}))
		gomega.Expect(containerPort(r.deployment, "metrics")).To(gomega.Equal(int32(8443)))
		gomega.Expect(containerPort(r.deployment, "health")).To(gomega.Equal(int32(8081)))
	})

	ginkgo.It("follows fullnameOverride everywhere", func() {
		r := render("--set", "fullnameOverride=ml-trainer")
		expectAgreement(r)
		gomega.Expect(r.cfg.CertManagement.WebhookServiceName).To(gomega.Equal("ml-trainer-controller-manager"))
		gomega.Expect(r.cfg.CertManagement.WebhookSecretName).To(gomega.Equal("ml-trainer-webhook-cert"))
	})

	ginkgo.It("follows explicit names, ports, feature gates and TLS options", func() {
		r := render("--set", "manager.config.certManagement.webhookServiceName=trainer-webhooks",
			"--set", "manager.config.certManagement.webhookSecretName=trainer-certs",
			"--set", "manager.config.webhook.port=9444", "--set", "manager.config.statusServer.port=11443",
			"--set", "manager.config.featureGates.TrainJobStatus=true",
			"--set", "manager.config.tls.minVersion=1.3",
			"--set", "manager.config.controller.groupKindConcurrency.trainJob=20")
		expectAgreement(r)
		gomega.Expect(r.cfg.FeatureGates).To(gomega.Equal(map[string]bool{"TrainJobStatus": true}))
		gomega.Expect(r.cfg.TLS.MinVersion).To(gomega.Equal("1.3"))
		gomega.Expect(r.cfg.Controller.GroupKindConcurrency).To(gomega.HaveKeyWithValue("TrainJob.trainer.kubeflow.org", int32(20)))
	})

	ginkgo.It("hands the certificate to cert-manager: the Secret it issues is the one the manager mounts and reads", func() {
		r := render("--set", "certManager.enabled=true", "--set", "manager.config.certManagement.webhookSecretName=trainer-certs")
		expectAgreement(r)
		gomega.Expect(*r.cfg.CertManagement.Enable).To(gomega.BeFalse(), "the manager's own rotation is off")
		gomega.Expect(r.secrets).To(gomega.BeEmpty(), "cert-manager creates the Secret")
		service := r.cfg.CertManagement.WebhookServiceName + ".ml-system.svc"
		gomega.Expect(r.certificates).To(gomega.Equal(map[string][]string{
			"trainer-certs": {service, service + ".cluster.local"},
		}))
		gomega.Expect(r.injectCA).To(gomega.Equal([]string{
			"ml-system/kubeflow-trainer-webhook-cert", "ml-system/kubeflow-trainer-webhook-cert",
		}), "both webhook configurations")
	})

	ginkgo.It("means what the kustomize install's Configuration means", func() {
		kustomize, err := config.Load(filepath.Join(util.RepoRoot(), "config", "manager", "controller_manager_config.yaml"))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(renderIn("kubeflow-system").cfg).To(gomega.Equal(kustomize))
	})

	ginkgo.It("names the webhook configurations the certificate rotator patches", func() {
		objs, err := util.HelmTemplate("ml-system")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var names []string
		for _, o := range objs {
			if o.GetKind() == "MutatingWebhookConfiguration" || o.GetKind() == "ValidatingWebhookConfiguration" {
				if o.GetLabels()["app.kubernetes.io/part-of"] == "gantry" {
					names = append(names, o.GetName())
				}
			}
		}
		gomega.Expect(names).To(gomega.ConsistOf(cert.MutatingWebhookConfig, cert.ValidatingWebhookConfig))
	})
})
