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
