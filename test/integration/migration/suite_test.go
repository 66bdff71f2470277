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

// Package migration follows docs/migration.md against an API server: Kubeflow Trainer v2.3's
// chart (read from its Go module) installed with TrainJobs and runtimes as the reference leaves
// them, the guide's commands run as written, then Gantry's chart and manager, which must find
// every object intact and take it over. It has a control plane of its own because the charts
// install the CRDs, which no other suite's control plane may lose or share.
package migration

import (
	"context"
	"os"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fwk "github.com/gantry-ml/gantry/test/integration/framework"
)

var (
	// Webhooks: the suite's webhook server stands in for the manager pods envtest cannot run,
	// the reference's first, then Gantry's.
	env        = &fwk.Framework{WithoutGantryCRDs: true, Webhooks: true}
	k8sClient  client.Client
	ctx        context.Context
	kubeconfig string
	server     webhookEndpoint
)

func TestMigration(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Migration suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env.StartSuite(ctx)
	k8sClient = env.Client
	server = takeWebhookEndpoint()
	dir, err := os.MkdirTemp("", "gantry-migration-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { _ = os.RemoveAll(dir) })
	kubeconfig, err = env.WriteKubeconfig(dir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
})
