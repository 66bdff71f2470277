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

package webhook

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// Gantry's knobs are annotations; the webhooks check them with the annotation's field path.
var _ = ginkgo.Describe("Admission of Gantry's knobs", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	job := func(name string, annotations ...string) *trainer.TrainJob {
		w := utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
			Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj())
		for i := 0; i+1 < len(annotations); i += 2 {
			w.Annotation(annotations[i], annotations[i+1])
		}
		return w.Obj()
	}

	ginkgo.DescribeTable("refuses a TTL that is not an int32 of 0 or more",
		func(value string) {
			gomega.Expect(k8sClient.Create(ctx, job("ttl", knobs.TTLSecondsAfterFinished, value))).To(beForbidden(
				`metadata.annotations[ttl.gantry.dev/seconds-after-finished]: Invalid value: "` + value + `": must be an integer from 0 to 2147483647`))
		},
		ginkgo.Entry("-1", "-1"), ginkgo.Entry("abc", "abc"), ginkgo.Entry("2^31", "2147483648"),
	)

	ginkgo.It("accepts a TTL, checks it when it changes, and lets other updates through", func() {
		tj := job("ttl-ok", knobs.TTLSecondsAfterFinished, "0", knobs.TTLCleanPods, "All")
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Annotations[knobs.TTLSecondsAfterFinished] = "x"
		gomega.Expect(k8sClient.Update(ctx, tj)).To(beForbidden("metadata.annotations[ttl.gantry.dev/seconds-after-finished]"))
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), tj)).To(gomega.Succeed())
		tj.Annotations[knobs.TTLSecondsAfterFinished] = "60"
		tj.Labels = map[string]string{"team": "a"}
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
	})

	ginkgo.It("refuses a runtime whose JobSet template sets a TTL, pointing to the annotation", func() {
		spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
		spec.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](0)
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "jobset-ttl").Spec(spec).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(beForbidden(
			"spec.template.spec.ttlSecondsAfterFinished: Forbidden: set the annotation ttl.gantry.dev/seconds-after-finished on the runtime or the TrainJob instead"))
	})

	ginkgo.It("refuses a runtime default that is not a number", func() {
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "bad-default").Annotation(knobs.TTLSecondsAfterFinished, "soon").
			Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(beForbidden(`metadata.annotations[ttl.gantry.dev/seconds-after-finished]: Invalid value: "soon"`))
	})
})
