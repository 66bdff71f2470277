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

// Package install proves the installation paths: the kustomize overlays and the Helm chart (with
// default values and with everything enabled) are accepted whole by a real API server, the
// chart's Configuration is one the manager accepts and agrees with the objects around it, the
// runtime installer the chart's hooks run applies and prunes runtimes, and an ordinary user can
// read the public ConfigMap. helm itself runs in test/integration/helm, on a cluster of its own.
package install

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
)

var (
	fwk       = &framework.Framework{}
	k8sClient client.Client
	ctx       context.Context
	// installer runs the chart's runtime installer Jobs with the gantry CLI built once.
	installer *framework.Installer
)

func TestInstall(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Install suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	fwk.StartSuite(ctx)
	k8sClient = fwk.Client
	installer = fwk.StartSuiteInstaller()
})
