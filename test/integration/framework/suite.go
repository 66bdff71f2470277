package framework

import (
	"context"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// StartSuite starts the control plane from a suite's BeforeSuite and stops it when the suite ends
// (ginkgo.DeferCleanup), so suites need no AfterSuite.
func (f *Framework) StartSuite(ctx context.Context) {
	ginkgo.DeferCleanup(f.Stop)
	gomega.Expect(f.Start(ctx)).To(gomega.Succeed())
}

// StartSuiteManager starts an in-process manager (StartManager) from a BeforeSuite and stops it,
// before the control plane, when the suite ends.
func (f *Framework) StartSuiteManager(ctx context.Context, setup func(manager.Manager) error) *Manager {
	m, err := f.StartManager(ctx, setup)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(m.Stop)
	return m
}
