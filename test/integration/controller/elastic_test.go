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
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/test/util"
)

// Elastic TrainJobs (elastic.gantry.dev/target-nodes). envtest runs no JobSet webhook, so JobSet
// accepts every scale here; the local cluster's e2e runs JobSet with its ElasticJobSet gate.
var _ = ginkgo.Describe("Elastic TrainJob scaling", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.It("patches the running JobSet's node job to target-nodes", func() {
		gomega.Expect(k8sClient.Create(ctx, torchRuntimeIn(ns).Obj())).To(gomega.Succeed())
		tj := torchJobIn(ns, "elastic", 4).Annotation(knobs.ElasticMinNodes, "1").Annotation(knobs.ElasticMaxNodes, "4").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		nodeParallelism := func(g gomega.Gomega) int32 {
			js := &jobsetv1alpha2.JobSet{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
			for _, rj := range js.Spec.ReplicatedJobs {
				if rj.Name == "node" {
					return *rj.Template.Spec.Parallelism
				}
			}
			return -1
		}
		gomega.Eventually(nodeParallelism, util.Timeout, util.Interval).Should(gomega.Equal(int32(4)))
		gomega.Eventually(func() error {
			cur := &trainer.TrainJob{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur); err != nil {
				return err
			}
			cur.Annotations[knobs.ElasticTargetNodes] = "2"
			return k8sClient.Update(ctx, cur)
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(nodeParallelism, util.Timeout, util.Interval).Should(gomega.Equal(int32(2)))
	})

	ginkgo.It("refuses to scale a TrainJob Kueue manages, with Scaled=False and the reason", func() {
		gomega.Expect(k8sClient.Create(ctx, torchRuntimeIn(ns).Obj())).To(gomega.Succeed())
		tj := torchJobIn(ns, "queued", 2).Label("kueue.x-k8s.io/queue-name", "q").
			Annotation(knobs.ElasticMinNodes, "1").Annotation(knobs.ElasticMaxNodes, "4").Annotation(knobs.ElasticTargetNodes, "2").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			cur.Annotations[knobs.ElasticTargetNodes] = "1"
			g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			c := apimeta.FindStatusCondition(cur.Status.Conditions, controller.ConditionScaled)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect([]string{string(c.Status), c.Reason}).To(gomega.Equal([]string{"False", controller.ReasonScaleKueueManaged}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})
