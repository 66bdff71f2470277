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
