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

package downstream

import (
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Polling settings for Eventually: envtest on a busy CI machine can take seconds.
const (
	timeout  = 30 * time.Second
	interval = 250 * time.Millisecond
)

// trainJob is what the platform's job submitter would send: two nodes of the shipped
// torch-distributed runtime.
func trainJob(ns, name string) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"},
			Trainer: &trainer.Trainer{
				Image:    ptr.To("registry.example.com/mnist:1"),
				Command:  []string{"torchrun", "train.py"},
				NumNodes: ptr.To[int32](2),
			},
		},
	}
}

// condition returns the TrainJob's condition of type typ, nil while it has none.
func condition(g gomega.Gomega, key types.NamespacedName, typ string) *metav1.Condition {
	tj := &trainer.TrainJob{}
	g.Expect(k8sClient.Get(ctx, key, tj)).To(gomega.Succeed())
	return apimeta.FindStatusCondition(tj.Status.Conditions, typ)
}

var _ = ginkgo.Describe("TrainJobs submitted by the platform", func() {
	var ns string
	ginkgo.BeforeEach(func() {
		ns = newNamespace()
	})

	ginkgo.It("run as a two-node JobSet and complete", func() {
		tj := trainJob(ns, "mnist")
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		key := types.NamespacedName{Namespace: ns, Name: tj.Name}

		js, err := gantry.WaitForJobSet(ctx, key)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(js.Spec.ReplicatedJobs).To(gomega.ContainElement(gomega.SatisfyAll(
			gomega.HaveField("Name", "node"),
			gomega.HaveField("Template.Spec.Parallelism", gomega.HaveValue(gomega.BeEquivalentTo(2))),
		)))
		gomega.Expect(condition(gomega.Default, key, trainer.TrainJobComplete)).To(gomega.BeNil())

		_, err = gantry.CompleteTrainJob(ctx, key)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(func(g gomega.Gomega) {
			c := condition(g, key, trainer.TrainJobComplete)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(gomega.Equal("AllJobsCompleted"))
		}, timeout, interval).Should(gomega.Succeed())
		gomega.Expect(condition(gomega.Default, key, trainer.TrainJobFailed)).To(gomega.BeNil())
	})

	ginkgo.It("fail with the reason and message of their JobSet", func() {
		tj := trainJob(ns, "broken")
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		key := types.NamespacedName{Namespace: ns, Name: tj.Name}

		js, err := gantry.FailTrainJob(ctx, key, "FailedJobs", "node-0 exited with code 42")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetFailed))).To(gomega.BeTrue())
		gomega.Eventually(func(g gomega.Gomega) {
			c := condition(g, key, trainer.TrainJobFailed)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Status).To(gomega.Equal(metav1.ConditionTrue))
			g.Expect(c.Reason).To(gomega.Equal("FailedJobs"))
			g.Expect(c.Message).To(gomega.Equal("node-0 exited with code 42"))
		}, timeout, interval).Should(gomega.Succeed())
		gomega.Expect(condition(gomega.Default, key, trainer.TrainJobComplete)).To(gomega.BeNil())

		ginkgo.By("a finished JobSet's outcome cannot be changed")
		_, err = gantry.CompleteTrainJob(ctx, key)
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("a finished JobSet never changes")))
	})

	ginkgo.It("are refused by Gantry's webhook when their runtime does not exist", func() {
		tj := trainJob(ns, "typo")
		tj.Spec.RuntimeRef.Name = "torch-distributd"
		err := k8sClient.Create(ctx, tj)
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "%v", err)
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring(`admission webhook "validator.trainjob.trainer.kubeflow.org" denied the request`)))
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("torch-distributd: specified clusterTrainingRuntime must be created")))
	})
})
