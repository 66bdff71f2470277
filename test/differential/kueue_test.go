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

package differential

import (
	"context"
	"path/filepath"
	goruntime "runtime"
	"testing"

	refconfig "github.com/kubeflow/trainer/v2/pkg/apis/config/v1alpha1"
	reftrainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	refcore "github.com/kubeflow/trainer/v2/pkg/runtime/core"
	refwebhooks "github.com/kubeflow/trainer/v2/pkg/webhooks"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/test/util"
	"github.com/gantry-ml/gantry/test/util/kueuepatch"
)

// The reference's answers to Kueue's writes, through a real apiserver with Kubeflow Trainer
// v2.3.0's CRDs and its webhooks running in-process: the table in test/util/kueuepatch holds
// them, and test/integration/webhook holds Gantry to the same table.
var refClient client.Client

// TestOnAPIServers runs the specs that need an apiserver: Kueue's writes against Kubeflow
// Trainer v2.3.0 (this file), Gantry's served CRDs and JobSet's answer to the reference's
// JobSets (served_test.go, jobset_test.go).
func TestOnAPIServers(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Kubeflow Trainer v2.3.0, Gantry's CRDs and JobSet on apiservers")
}

var _ = ginkgo.BeforeSuite(func() {
	_, file, _, _ := goruntime.Caller(0)
	here := filepath.Dir(file)
	refDir, err := util.ModuleDirIn(here, referenceModule)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	jobsetDir, err := util.ModuleDirIn(here, "sigs.k8s.io/jobset")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())

	env := &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join(refDir, "manifests", "base", "crds"),
			filepath.Join(jobsetDir, "config", "components", "crd", "bases"),
		},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(refDir, "manifests", "base", "webhook", "manifests.yaml")},
		},
	}
	cfg, err := env.Start()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, reftrainer.AddToScheme, jobsetv1alpha2.AddToScheme} {
		gomega.Expect(add(scheme)).To(gomega.Succeed())
	}
	wh := env.WebhookInstallOptions
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:  scheme,
		Metrics: metricsserver.Options{BindAddress: "0"},
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir,
		}),
	})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	refCfg := &refconfig.Configuration{}
	refconfig.SetDefaults_Configuration(refCfg)
	ctx, cancel := context.WithCancel(context.Background())
	ginkgo.DeferCleanup(cancel)
	runtimes, err := refcore.New(ctx, mgr.GetClient(), mgr.GetFieldIndexer(), refCfg)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = refwebhooks.Setup(mgr, runtimes)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	go func() {
		defer ginkgo.GinkgoRecover()
		gomega.Expect(mgr.Start(ctx)).To(gomega.Succeed())
	}()
	refClient, err = client.New(cfg, client.Options{Scheme: scheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	checker := mgr.GetWebhookServer().StartedChecker()
	gomega.Eventually(func() error { return checker(nil) }).Should(gomega.Succeed())
	startServed()
})

var _ = ginkgo.Describe("Kueue's runtime patch writes, answered by Kubeflow Trainer v2.3.0", func() {
	kueuepatch.Specs(func() client.Client { return refClient }, func() string {
		return util.NewNamespace(context.Background(), refClient, "kueue")
	})
})
