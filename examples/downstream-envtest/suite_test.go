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

// Package downstream is a platform team's envtest suite that runs Gantry's controller and
// webhooks in-process with github.com/gantry-ml/gantry/pkg/testkit.
package downstream

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/pkg/testkit"
)

var (
	ctx       context.Context
	gantry    *testkit.Gantry
	k8sClient client.Client
)

func TestDownstream(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Downstream suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env, err := testkit.Environment()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	// The platform's own CRDs would be added here: env.CRDDirectoryPaths = append(...).
	_, err = env.Start()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)

	gantry, err = testkit.Start(ctx, env, testkit.Options{Runtimes: []string{"torch-distributed"}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(gantry.Stop)
	k8sClient = gantry.Client
})

// newNamespace creates a namespace for the current spec and deletes it when the spec ends.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "downstream-"}}
	gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() {
		gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ns))).To(gomega.Succeed())
	})
	return ns.Name
}
