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

package controller

import (
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
)

// setupControllers is what the suite's manager runs: the built-in plugins without the status
// server, and every controller.
func setupControllers(m manager.Manager) error {
	rt, err := plugins.NewRuntime(framework.Options{})
	if err != nil {
		return err
	}
	return controller.SetupControllers(m, rt)
}

// withManagerStopped stops the suite's manager, runs during (what happens while Gantry is down),
// then starts a new manager with the same setup.
func withManagerStopped(during func()) {
	gomega.Expect(mgr.Stop()).To(gomega.Succeed())
	during()
	var err error
	mgr, err = env.StartManager(ctx, setupControllers)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
}

// withManager replaces the suite's manager by one with setup until the returned function runs.
func withManager(setup func(manager.Manager) error) (restore func()) {
	gomega.Expect(mgr.Stop()).To(gomega.Succeed())
	var err error
	mgr, err = env.StartManager(ctx, setup)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return func() {
		gomega.Expect(mgr.Stop()).To(gomega.Succeed())
		mgr, err = env.StartManager(ctx, setupControllers)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
	}
}
