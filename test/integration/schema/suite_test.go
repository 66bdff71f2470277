// Package schema proves the generated CRDs: the defaults, every OpenAPI bound and CEL rule with
// its message, and that realistic runtimes and TrainJobs are accepted without losing a field.
package schema

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
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
	fwk.StartSuite(ctx)
	k8sClient = fwk.Client
})

func newNamespace() string {
	return util.NewNamespace(ctx, k8sClient, "schema")
}
