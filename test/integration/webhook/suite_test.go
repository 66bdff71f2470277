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

// Package webhook exercises the admission webhooks through a real apiserver: what they default,
// what they refuse (403), and what they let through.
package webhook

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/webhook"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	env       = &fwk.Framework{Webhooks: true}
	k8sClient client.Client
	ctx       context.Context
	mgr       *fwk.Manager
)

func TestWebhook(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Webhook suite")
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
		return webhook.Setup(m, rt, clock.RealClock{})
	})
})

func newNamespace() string {
	return util.NewNamespace(ctx, k8sClient, "webhook")
}
