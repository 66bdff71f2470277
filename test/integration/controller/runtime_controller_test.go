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
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("Runtime controllers", func() {
	ginkgo.It("remove the legacy in-use finalizer, so runtimes in use can be deleted", func() {
		ns := newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "legacy").Obj()
		rt.Finalizers = []string{trainer.ResourceInUseFinalizer}
		ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("legacy-cluster").Obj()
		ctr.Finalizers = []string{trainer.ResourceInUseFinalizer}
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, ctr)).To(gomega.Succeed())
		tj := utiltesting.MakeTrainJobWrapper(ns, "user").RuntimeRef(trainer.TrainingRuntimeKind, "legacy").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())

		for _, obj := range []client.Object{rt, ctr} {
			gomega.Expect(k8sClient.Delete(ctx, obj)).To(gomega.Succeed())
			gomega.Eventually(func(g gomega.Gomega) {
				err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
				g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "still there: %v", obj.GetFinalizers())
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
		}
	})
})
