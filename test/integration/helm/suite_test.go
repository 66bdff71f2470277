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
