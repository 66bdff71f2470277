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
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"sync"
	"testing/fstest"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	jobsetwebhooks "sigs.k8s.io/jobset/pkg/webhooks"
	"sigs.k8s.io/yaml"

	"github.com/gantry-ml/gantry/internal/crdschema"
	"github.com/gantry-ml/gantry/test/util"
)

// servedClient reaches an apiserver that serves Gantry's CRDs as installed (config/crd/bases)
// and JobSet's CRDs, with JobSet's own webhooks running in this process: what a cluster does
// with Gantry's objects at the schema, and with a JobSet.
var servedClient client.Client

// startServed starts that apiserver and JobSet's webhooks, from BeforeSuite.
func startServed() {
	_, file, _, _ := goruntime.Caller(0)
	here := filepath.Dir(file)
	jobsetDir, err := util.ModuleDirIn(here, "sigs.k8s.io/jobset")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	env := &envtest.Environment{
		CRDDirectoryPaths: []string{
			filepath.Join(repoRoot(), "config", "crd", "bases"),
			filepath.Join(jobsetDir, "config", "components", "crd", "bases"),
		},
		ErrorIfCRDPathMissing: true,
		WebhookInstallOptions: envtest.WebhookInstallOptions{
			Paths: []string{filepath.Join(jobsetDir, "config", "components", "webhook", "manifests.yaml")},
		},
	}
	cfg, err := env.Start()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)

	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, jobsetv1alpha2.AddToScheme} {
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
	gomega.Expect(jobsetwebhooks.Setup(mgr)).To(gomega.Succeed())
	ctx, cancel := context.WithCancel(context.Background())
	ginkgo.DeferCleanup(cancel)
	go func() {
		defer ginkgo.GinkgoRecover()
		gomega.Expect(mgr.Start(ctx)).To(gomega.Succeed())
	}()
	servedClient, err = client.New(cfg, client.Options{Scheme: scheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	referenceSinceSchemas, err = loadReferenceSince()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	checker := mgr.GetWebhookServer().StartedChecker()
	gomega.Eventually(func() error { return checker(nil) }).Should(gomega.Succeed())
}

// dryRun creates obj on the served apiserver without storing it, and returns the refusal.
func dryRun(ctx context.Context, obj map[string]any) error {
	return servedClient.Create(ctx, &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}, client.DryRunAll)
}

var _ = ginkgo.Describe("Gantry's CRDs as an apiserver serves them", func() {
	// Every fixture (the shipped runtimes, the examples) and every single-field mutation of them
	// is decided by the served CRDs as by Kubeflow Trainer v2.3.0's schema and by the offline
	// copy of Gantry's that the differential and gantry render use: the seeds, accepted before
	// the CRDs became the reference's, are still accepted, and nothing else changes at the
	// schema but what docs/compatibility.md lists.
	ginkgo.It("decide every fixture and single-field mutation as Kubeflow Trainer v2.3.0's schema does", func(ctx ginkgo.SpecContext) {
		var cases []*Case
		for _, seed := range seeds {
			cases = append(cases, seed.DeepCopy())
			for _, m := range Mutators {
				for v := range m.Values {
					c := seed.DeepCopy()
					m.Apply(c, v)
					c.Name = fmt.Sprintf("%s, %s #%d", seed.Name, m.Name, v)
					cases = append(cases, c)
				}
			}
		}
		var (
			mu       sync.Mutex
			problems []string
			wg       sync.WaitGroup
			work     = make(chan *Case)
		)
		for range 8 {
			wg.Go(func() {
				for c := range work {
					for _, obj := range []map[string]any{c.Runtime, c.TrainJob} {
						if p := compareServed(ctx, obj); p != "" {
							mu.Lock()
							problems = append(problems, c.Name+": "+p)
							mu.Unlock()
						}
					}
				}
			})
		}
		for _, c := range cases {
			work <- c
		}
		close(work)
		wg.Wait()
		gomega.Expect(problems).To(gomega.BeEmpty(), "%d of %d cases", len(problems), len(cases))
		for _, seed := range seeds {
			for _, obj := range []map[string]any{seed.Runtime, seed.TrainJob} {
				gomega.Expect(dryRun(ctx, obj)).To(gomega.Succeed(), seed.Name)
			}
		}
	})
})

// referenceSinceSchemas is Kubeflow Trainer v2.3.0's schema with the rules upstream added since
// (upstreamSince), which Gantry's carries too.
var referenceSinceSchemas *crdschema.Schemas

// loadReferenceSince reads the reference's CRDs from its module and adds upstreamSince's rules.
func loadReferenceSince() (*crdschema.Schemas, error) {
	_, file, _, _ := goruntime.Caller(0)
	dir, err := util.ModuleDirIn(filepath.Dir(file), referenceModule)
	if err != nil {
		return nil, err
	}
	files, err := filepath.Glob(filepath.Join(dir, "manifests", "base", "crds", "*.yaml"))
	if err != nil {
		return nil, err
	}
	fsys := fstest.MapFS{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := map[string]any{}
		if err := yaml.Unmarshal(raw, &crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		name, _, _ := unstructured.NestedString(crd, "metadata", "name")
		if patch := upstreamSince[name]; patch != nil {
			versions, _, _ := unstructured.NestedSlice(crd, "spec", "versions")
			schema, _, _ := unstructured.NestedMap(versions[0].(map[string]any), "schema", "openAPIV3Schema")
			patch(schema)
			if err := unstructured.SetNestedMap(versions[0].(map[string]any), schema, "schema", "openAPIV3Schema"); err != nil {
				return nil, err
			}
			if err := unstructured.SetNestedSlice(crd, versions, "spec", "versions"); err != nil {
				return nil, err
			}
		}
		if raw, err = yaml.Marshal(crd); err != nil {
			return nil, err
		}
		fsys["crds/"+filepath.Base(f)] = &fstest.MapFile{Data: raw}
	}
	return crdschema.Load(fsys)
}

// compareServed returns what is wrong when the served CRD, the offline copy of Gantry's and the
// reference's schema (with the rules since) do not all accept obj, or do not all refuse it.
func compareServed(ctx context.Context, obj map[string]any) string {
	served := dryRun(ctx, obj)
	if served != nil && !apierrors.IsInvalid(served) {
		return fmt.Sprintf("%s: not a schema refusal: %v", obj["kind"], served)
	}
	offline := schemaErrors(ctx, gantry.schemas, runtime.DeepCopyJSON(obj))
	ref := schemaErrors(ctx, referenceSinceSchemas, runtime.DeepCopyJSON(obj))
	if (served == nil) == (len(offline) == 0) && (served == nil) == (len(ref) == 0) {
		return ""
	}
	return fmt.Sprintf("%s: served: %v; offline: %s; reference: %s", obj["kind"], served, describe(offline), describe(ref))
}
