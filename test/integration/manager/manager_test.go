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

// Package manager runs the real manager binary against an envtest apiserver: configuration file,
// in-process certificate rotation, readiness gated on certificates, leader election, and a
// TrainJob reconciled into a JobSet.
package manager

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	env        = &fwk.Framework{}
	k8sClient  client.Client
	ctx        context.Context
	binary     string
	kubeconfig string
)

func TestManager(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Manager binary suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env.StartSuite(ctx)
	k8sClient = env.Client
	dir := ginkgo.GinkgoT().TempDir()
	binary = filepath.Join(dir, "manager")
	build := exec.Command("go", "build", "-o", binary, "./cmd/manager")
	build.Dir = util.RepoRoot()
	out, err := build.CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
	kubeconfig, err = env.WriteKubeconfig(dir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeflow-system"}}
	gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
	createWebhookConfigurations()
})

// createWebhookConfigurations stands in for the install manifests: the rotator injects its CA
// into configurations of these names. Their rules match nothing, since the apiserver cannot reach
// the manager through a Service here; the webhook suite tests the webhooks themselves.
func createWebhookConfigurations() {
	rules := []admissionv1.RuleWithOperations{{
		Operations: []admissionv1.OperationType{admissionv1.Create},
		Rule:       admissionv1.Rule{APIGroups: []string{"example.invalid"}, APIVersions: []string{"v1"}, Resources: []string{"nothing"}},
	}}
	svc := &admissionv1.ServiceReference{Namespace: "kubeflow-system", Name: "kubeflow-trainer-controller-manager", Path: ptr.To("/x")}
	none := admissionv1.SideEffectClassNone
	gomega.Expect(k8sClient.Create(ctx, &admissionv1.MutatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "defaulter.trainer.kubeflow.org"},
		Webhooks: []admissionv1.MutatingWebhook{{Name: "defaulter.trainjob.trainer.kubeflow.org", Rules: rules, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionv1.WebhookClientConfig{Service: svc}}},
	})).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, &admissionv1.ValidatingWebhookConfiguration{
		ObjectMeta: metav1.ObjectMeta{Name: "validator.trainer.kubeflow.org"},
		Webhooks: []admissionv1.ValidatingWebhook{{Name: "validator.trainjob.trainer.kubeflow.org", Rules: rules, SideEffects: &none,
			AdmissionReviewVersions: []string{"v1"}, ClientConfig: admissionv1.WebhookClientConfig{Service: svc}}},
	})).To(gomega.Succeed())
}

// process is a running manager.
type process struct {
	cmd    *exec.Cmd
	mu     sync.Mutex
	output bytes.Buffer
	health string
	// status is the status server's address.
	status string
}

func (p *process) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.Write(b)
}

func (p *process) logs() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.output.String()
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port
}

// startManager runs the binary with a Configuration file and stops it when the spec ends. Managers
// sharing a lease name elect one leader.
func startManager(name, lease string, args ...string) *process {
	health := fmt.Sprintf("127.0.0.1:%d", freePort())
	statusPort := freePort()
	config := fmt.Sprintf(`apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {port: %d, host: 127.0.0.1}
metrics: {bindAddress: "0"}
health: {healthProbeBindAddress: %q}
leaderElection: {leaderElect: true, resourceName: %s, resourceNamespace: kubeflow-system}
certManagement: {enable: true}
statusServer: {port: %d}
`, freePort(), health, lease, statusPort)
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), name+".yaml")
	gomega.Expect(os.WriteFile(path, []byte(config), 0o600)).To(gomega.Succeed())
	p := &process{health: health, status: fmt.Sprintf("127.0.0.1:%d", statusPort)}
	p.cmd = exec.Command(binary, append([]string{"--config", path, "--zap-log-level", "2"}, args...)...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = p, p
	gomega.Expect(p.cmd.Start()).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() {
		_ = p.cmd.Process.Signal(os.Interrupt)
		_ = p.cmd.Wait()
		ginkgo.AddReportEntry(name+" logs", p.logs())
	})
	return p
}

func (p *process) ready() error {
	_, err := p.probe("/readyz")
	return err
}

// probe returns the verbose answer of a probe endpoint, an error unless it is 200.
func (p *process) probe(path string) (string, error) {
	resp, err := http.Get("http://" + p.health + path + "?verbose") //nolint:noctx // a probe with the client's defaults
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return string(body), fmt.Errorf("%s: %s: %s", path, resp.Status, body)
	}
	return string(body), nil
}

var _ = ginkgo.Describe("The manager binary", ginkgo.Ordered, func() {
	ginkgo.It("becomes ready once certificates exist, then reconciles TrainJobs", func() {
		first := startManager("first", "gantry-test")
		gomega.Eventually(first.ready, "60s", util.Interval).Should(gomega.Succeed(), func() string { return first.logs() })
		secret := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "kubeflow-system", Name: "kubeflow-trainer-webhook-cert"}, secret)).To(gomega.Succeed())
		gomega.Expect(secret.Data).To(gomega.HaveKey("tls.crt"))
		gomega.Eventually(func(g gomega.Gomega) {
			v := &admissionv1.ValidatingWebhookConfiguration{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "validator.trainer.kubeflow.org"}, v)).To(gomega.Succeed())
			g.Expect(v.Webhooks[0].ClientConfig.CABundle).To(gomega.Equal(secret.Data["ca.crt"]))
			m := &admissionv1.MutatingWebhookConfiguration{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: "defaulter.trainer.kubeflow.org"}, m)).To(gomega.Succeed())
			g.Expect(m.Webhooks[0].ClientConfig.CABundle).To(gomega.Equal(secret.Data["ca.crt"]))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())

		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "mgr-"}}
		gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns.Name, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns.Name, "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})).To(gomega.Succeed())
		}, "30s", util.Interval).Should(gomega.Succeed(), func() string { return first.logs() })

		gomega.Expect(first.logs()).To(gomega.MatchRegexp(`CRD not installed; plugin disabled.*"plugin":"Volcano"`),
			"the Volcano CRD is not installed here, the coscheduling one is")
		gomega.Expect(first.logs()).NotTo(gomega.MatchRegexp(`plugin disabled.*"plugin":"CoScheduling"`))

		ginkgo.By("starting a second manager, which serves but waits on the leader lease")
		second := startManager("second", "gantry-test")
		gomega.Eventually(second.ready, "60s", util.Interval).Should(gomega.Succeed(), func() string { return second.logs() })
		gomega.Eventually(second.logs, "30s", util.Interval).Should(gomega.ContainSubstring("Attempting to acquire leader lease"))
		lease := &coordinationv1.Lease{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: "kubeflow-system", Name: "gantry-test"}, lease)).To(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(lease), lease)).To(gomega.Succeed())
			g.Expect(second.logs()).NotTo(gomega.ContainSubstring("Successfully acquired lease"))
		}, "3s", util.Interval).Should(gomega.Succeed())
	})
})
