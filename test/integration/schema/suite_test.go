// Package schema proves the generated CRDs: the defaults, every OpenAPI bound and CEL rule with
// its message, and that realistic runtimes and TrainJobs are accepted without losing a field.
package schema

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
)

var (
	fwk       = &framework.Framework{}
	k8sClient client.Client
	ctx       context.Context
)

func TestSchema(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "CRD schema suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	gomega.Expect(fwk.Start(ctx)).To(gomega.Succeed())
	k8sClient = fwk.Client
})

var _ = ginkgo.AfterSuite(func() {
	gomega.Expect(fwk.Stop()).To(gomega.Succeed())
})

// newNamespace creates a namespace for one spec and deletes it when the spec ends.
func newNamespace() string {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: "schema-"}}
	gomega.Expect(k8sClient.Create(ctx, ns)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() {
		gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ns))).To(gomega.Succeed())
	})
	return ns.Name
}
