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

// Package controller runs the TrainJob and runtime controllers in-process against envtest and
// checks what they do to the cluster.
package controller

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
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

// torchRuntimeIn is a TrainingRuntime "torch" of the torch policy in ns.
func torchRuntimeIn(ns string) *utiltesting.TrainingRuntimeWrapper {
	return utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
		utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj())
}

// torchJobIn is a TrainJob of numNodes nodes on torchRuntimeIn's runtime.
func torchJobIn(ns, name string, numNodes int32) *utiltesting.TrainJobWrapper {
	return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
		Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", []string{"torchrun"}, nil).NumNodes(numNodes).Obj())
}
