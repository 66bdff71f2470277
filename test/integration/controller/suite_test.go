// Package controller runs the TrainJob and runtime controllers in-process against envtest and
// checks what they do to the cluster.
package controller

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	env       = &fwk.Framework{}
	k8sClient client.Client
	ctx       context.Context
	mgr       *fwk.Manager
)

func TestController(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Controller suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env.StartSuite(ctx)
	k8sClient = env.Client
	var err error
	mgr, err = env.StartManager(ctx, setupControllers)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	// mgr changes when a spec restarts the manager: stop whichever runs at the end.
	ginkgo.DeferCleanup(func() error { return mgr.Stop() })
})

func newNamespace() string {
	return util.NewNamespace(ctx, k8sClient, "ctrl")
}
