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

// Package statusserver runs the TrainJob controller with the TrainJobStatus plugin and the status
// server in-process against envtest: what the pods get, the CA ConfigMap and its rotation, and
// every answer of the server to tokens the test apiserver issues (TokenRequest) or that only
// look like them.
package statusserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/internal/statusserver"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

const operatorNamespace = "kubeflow-system"

var (
	env        = &fwk.Framework{}
	k8sClient  client.Client
	ctx        context.Context
	mgr        *fwk.Manager
	testCA     *utiltesting.TestCA
	serverAddr string
	httpClient *http.Client
	caSecret   = types.NamespacedName{Namespace: operatorNamespace, Name: configapi.DefaultWebhookSecretName}
)

func TestStatusServer(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Status server suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env.StartSuite(ctx)
	k8sClient = env.Client
	gomega.Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: operatorNamespace}})).To(gomega.Succeed())

	// What the rotator keeps in a real install: a CA in the webhook certificate Secret, and a
	// serving certificate signed by it in the certificate directory.
	var err error
	testCA, err = utiltesting.NewTestCA()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	certDir := ginkgo.GinkgoT().TempDir()
	_, err = testCA.WriteServingCert(certDir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(k8sClient.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: caSecret.Namespace, Name: caSecret.Name},
		Data:       map[string][]byte{"ca.crt": testCA.PEM},
	})).To(gomega.Succeed())
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(testCA.PEM)
	httpClient = &http.Client{Timeout: 15 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
	}}

	// The server listens on a port of its own; the injected URL points at it, as it points at the
	// manager's Service in a cluster.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	serverAddr = ln.Addr().String()
	mgr = env.StartSuiteManager(ctx, func(m manager.Manager) error {
		bundle, err := cert.NewCABundle(m.GetConfig(), m.GetScheme(), m.GetRESTMapper(), caSecret)
		if err != nil {
			return err
		}
		if err := m.Add(bundle.Cache()); err != nil {
			return err
		}
		rt, err := plugins.NewRuntime(framework.Options{StatusServerURL: statusURL})
		if err != nil {
			return err
		}
		if err := controller.SetupControllers(m, rt, controller.WithStatusServerCA(bundle)); err != nil {
			return err
		}
		cfg := &configapi.Configuration{}
		configapi.SetDefaults(cfg)
		restConfig := config.StatusServerRESTConfig(cfg, m.GetConfig())
		verifier, err := statusserver.NewOIDCVerifier(restConfig)
		if err != nil {
			return err
		}
		if err := m.Add(verifier); err != nil {
			return err
		}
		c, err := client.New(restConfig, client.Options{Scheme: m.GetScheme(), Mapper: m.GetRESTMapper()})
		if err != nil {
			return err
		}
		srv, err := statusserver.New(statusserver.Options{Listener: ln, CertDir: certDir,
			TLSOpts: []func(*tls.Config){config.TLSConfig(nil)}, Verifier: verifier, Applier: &statusserver.ClientApplier{Client: c}})
		if err != nil {
			return err
		}
		return m.Add(srv)
	})
	// Serving, and the verifier knows the issuer: a bad token is refused (403), not 500.
	gomega.Eventually(func(g gomega.Gomega) {
		code, _ := post(g, statusURL("ns", "job"), "not-a-token", "{}")
		g.Expect(code).To(gomega.Equal(http.StatusForbidden))
	}, "30s", util.Interval).Should(gomega.Succeed())
})

func statusURL(namespace, name string) string {
	return "https://" + serverAddr + trainjobstatus.Path(namespace, name)
}

// post sends body as the SDK does and returns the code and the response body.
func post(g gomega.Gomega, url, token, body string) (int, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	g.Expect(err).NotTo(gomega.HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := httpClient.Do(req)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return resp.StatusCode, string(data)
}

// report is the SDK's request body.
func report(progress, eta int32, at time.Time, metrics ...trainer.Metric) string {
	data, err := json.Marshal(trainer.UpdateTrainJobStatusRequest{TrainerStatus: &trainer.TrainJobTrainerStatus{
		ProgressPercentage: &progress, EstimatedRemainingSeconds: &eta, Metrics: metrics, LastUpdatedTime: metav1.NewTime(at),
	}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return string(data)
}

func newNamespace() string {
	return util.NewNamespace(ctx, k8sClient, "status")
}

// newTrainJob creates a torch TrainingRuntime (once per namespace) and a TrainJob on it, and
// waits for its JobSet.
func newTrainJob(ns, name string) *trainer.TrainJob {
	rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
		utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, rt))).To(gomega.Succeed())
	tj := utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
	gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
	gomega.Eventually(func(g gomega.Gomega) {
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})).To(gomega.Succeed())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
	return tj
}

// tokenFor is a token as the kubelet projects it into the TrainJob's pods: issued in its
// namespace for its audience.
func tokenFor(tj *trainer.TrainJob) string {
	token, err := env.RequestToken(ctx, tj.Namespace, "default", 3600, trainjobstatus.Audience(tj.Namespace, tj.Name))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return token
}

func trainerStatus(g gomega.Gomega, tj *trainer.TrainJob) *trainer.TrainJobTrainerStatus {
	cur := &trainer.TrainJob{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
	if st := cur.Status.TrainerStatus; st != nil {
		// Decoded times are local; the tests' are UTC.
		st.LastUpdatedTime = metav1.NewTime(st.LastUpdatedTime.UTC())
	}
	return cur.Status.TrainerStatus
}

// decodeStatus reads an error body.
func decodeStatus(body string) metav1.Status {
	s := metav1.Status{}
	gomega.Expect(json.NewDecoder(bytes.NewReader([]byte(body))).Decode(&s)).To(gomega.Succeed(), body)
	return s
}
