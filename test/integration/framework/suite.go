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
