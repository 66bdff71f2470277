// Package helm runs the chart through helm itself: install, upgrade and uninstall against a
// control plane Gantry was never installed on, with the hook Jobs carried out by the test as a
// kubelet would. It has a control plane of its own because the chart installs Gantry's CRDs:
// a suite that had to delete them first would wait on the apiserver's CRD cleanup, and every
// spec sharing the control plane would see them gone.
package helm

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
)

var (
	fwk       = &framework.Framework{WithoutGantryCRDs: true}
	k8sClient client.Client
	ctx       context.Context
	installer *framework.Installer
)

func TestHelm(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Helm suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	fwk.StartSuite(ctx)
	k8sClient = fwk.Client
	installer = fwk.StartSuiteInstaller()
})
