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

package migration

import (
	"net/url"

	"github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/webhook"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// Both charts name their webhook configurations as config/webhook does.
const (
	mutatingName   = "defaulter.trainer.kubeflow.org"
	validatingName = "validator.trainer.kubeflow.org"
)

// webhookEndpoint is where the suite's webhook server listens, and the CA of its certificate.
type webhookEndpoint struct {
	base     url.URL
	caBundle []byte
}

// takeWebhookEndpoint reads the address envtest gave the webhook configurations it installed,
// then deletes them: the cluster must start without Gantry, and both charts create
// configurations of the same names.
func takeWebhookEndpoint() webhookEndpoint {
	m := &admissionv1.MutatingWebhookConfiguration{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: mutatingName}, m)).To(gomega.Succeed())
	cc := m.Webhooks[0].ClientConfig
	gomega.Expect(cc.URL).NotTo(gomega.BeNil())
	u, err := url.Parse(*cc.URL)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	u.Path = ""
	gomega.Expect(k8sClient.Delete(ctx, m)).To(gomega.Succeed())
	v := &admissionv1.ValidatingWebhookConfiguration{}
	v.Name = validatingName
	gomega.Expect(k8sClient.Delete(ctx, v)).To(gomega.Succeed())
	return webhookEndpoint{base: *u, caBundle: cc.CABundle}
}

// to points a service reference at the suite's server, keeping its path.
func (e webhookEndpoint) to(cc admissionv1.WebhookClientConfig) admissionv1.WebhookClientConfig {
	gomega.Expect(cc.Service).NotTo(gomega.BeNil(), "a chart's webhooks name the manager's Service")
	u := e.base
	u.Path = ptr.Deref(cc.Service.Path, "/")
	return admissionv1.WebhookClientConfig{URL: ptr.To(u.String()), CABundle: e.caBundle}
}

// serveWebhooks does for the webhook configurations a chart installed what its Service, the
// manager pods behind it and their certificate would: it sends the calls to the suite's server.
// The returned function puts the chart's client configurations back, as they were before the
// pods came, so that helm finds its own objects when it next changes them.
func serveWebhooks() (restore func()) {
	m := &admissionv1.MutatingWebhookConfiguration{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: mutatingName}, m)).To(gomega.Succeed())
	mOrig := m.DeepCopy()
	for i := range m.Webhooks {
		m.Webhooks[i].ClientConfig = server.to(m.Webhooks[i].ClientConfig)
	}
	gomega.Expect(k8sClient.Update(ctx, m)).To(gomega.Succeed())
	v := &admissionv1.ValidatingWebhookConfiguration{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: validatingName}, v)).To(gomega.Succeed())
	vOrig := v.DeepCopy()
	for i := range v.Webhooks {
		v.Webhooks[i].ClientConfig = server.to(v.Webhooks[i].ClientConfig)
	}
	gomega.Expect(k8sClient.Update(ctx, v)).To(gomega.Succeed())
	awaitWebhooks()
	return func() {
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(m), m)).To(gomega.Succeed())
		for i := range m.Webhooks {
			m.Webhooks[i].ClientConfig = mOrig.Webhooks[i].ClientConfig
		}
		gomega.Expect(k8sClient.Update(ctx, m)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(v), v)).To(gomega.Succeed())
		for i := range v.Webhooks {
			v.Webhooks[i].ClientConfig = vOrig.Webhooks[i].ClientConfig
		}
		gomega.Expect(k8sClient.Update(ctx, v)).To(gomega.Succeed())
	}
}

// awaitWebhooks waits until the apiserver, which reads webhook configurations through an
// informer, sends TrainJob admission to the suite's server: a server-side dry run then gets an
// answer of the webhooks (allowed, or refused for the missing runtime) instead of failing to call
// them. TrainJobs go through both configurations.
func awaitWebhooks() {
	probe := referenceTrainJob("webhook-probe", trainer.ClusterTrainingRuntimeKind, "webhook-probe", false)
	probe.Namespace = metav1.NamespaceDefault
	gomega.Eventually(func() string {
		err := k8sClient.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		if err == nil {
			return ""
		}
		return err.Error()
	}, util.Timeout, util.Interval).ShouldNot(gomega.ContainSubstring("failed calling webhook"))
}

// startReferenceStandIn serves admission while the reference is installed: the reference's
// manager is not run here, and Gantry's webhooks admit what it admits (the differential suite
// holds that), so the objects enter the cluster as the reference would have let them.
func startReferenceStandIn() *fwk.Manager {
	m, err := env.StartManager(ctx, func(m manager.Manager) error {
		rt, err := plugins.NewRuntime(framework.Options{})
		if err != nil {
			return err
		}
		return webhook.Setup(m, rt, clock.RealClock{})
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return m
}

// startGantry starts Gantry's manager as the chart's Deployment would run it: every controller
// and the webhooks (without the status server, which needs the pods' network).
func startGantry() *fwk.Manager {
	m, err := env.StartManager(ctx, func(m manager.Manager) error {
		rt, err := plugins.NewRuntime(framework.Options{})
		if err != nil {
			return err
		}
		if err := controller.SetupControllers(m, rt); err != nil {
			return err
		}
		return webhook.Setup(m, rt, clock.RealClock{})
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return m
}
