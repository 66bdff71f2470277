// Package controller runs the TrainJob and runtime controllers in-process against envtest and
// checks what they do to the cluster.
package controller

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
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
	mgr = env.StartSuiteManager(ctx, func(m manager.Manager) error {
		rt, err := plugins.NewRuntime(framework.Options{})
		if err != nil {
			return err
		}
		return controller.SetupControllers(m, rt)
	})
})

func newNamespace() string {
	return util.NewNamespace(ctx, k8sClient, "ctrl")
}
