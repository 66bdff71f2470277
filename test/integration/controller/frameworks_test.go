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
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("Every framework", func() {
	ginkgo.DescribeTable("builds the JobSet and mirrors its end",
		func(spec func() *utiltesting.TrainingRuntimeSpecWrapper, jobSetCondition, reason, message, wantType string) {
			ns := newNamespace()
			s := spec().Obj()
			if s.MLPolicy != nil && s.MLPolicy.MPI != nil {
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.Node).Name = "launcher"
			}
			rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "rt").Spec(s).Obj()
			gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
			tj := utiltesting.MakeTrainJobWrapper(ns, "job").RuntimeRef(trainer.TrainingRuntimeKind, "rt").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())

			gomega.Eventually(func(g gomega.Gomega) {
				js := &jobsetv1alpha2.JobSet{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), js)).To(gomega.Succeed())
				apimeta.SetStatusCondition(&js.Status.Conditions, metav1.Condition{
					Type: jobSetCondition, Status: metav1.ConditionTrue, Reason: reason, Message: message,
				})
				g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
			gomega.Eventually(func(g gomega.Gomega) {
				got := &trainer.TrainJob{}
				g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
				c := apimeta.FindStatusCondition(got.Status.Conditions, wantType)
				g.Expect(c).NotTo(gomega.BeNil())
				g.Expect([]string{string(c.Status), c.Reason, c.Message}).To(gomega.Equal([]string{"True", reason, message}))
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
		},
		ginkgo.Entry("plain ML, Complete", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(1)
		}, "Completed", "AllJobsCompleted", "jobset completed successfully", trainer.TrainJobComplete),
		ginkgo.Entry("torch, Failed", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{})
		}, "Failed", "FailedJobs", "jobset failed due to one or more job failures", trainer.TrainJobFailed),
		ginkgo.Entry("OpenMPI, Complete", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{})
		}, "Completed", "AllJobsCompleted", "jobset completed successfully", trainer.TrainJobComplete),
		ginkgo.Entry("OpenMPI, Failed", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{})
		}, "Failed", "ReachedMaxRestarts", "jobset failed due to reaching max number of restarts", trainer.TrainJobFailed),
		ginkgo.Entry("JAX, Complete", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().JAX()
		}, "Completed", "AllJobsCompleted", "jobset completed successfully", trainer.TrainJobComplete),
		ginkgo.Entry("JAX, Failed", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().JAX()
		}, "Failed", "FailedJobs", "jobset failed due to one or more job failures", trainer.TrainJobFailed),
		ginkgo.Entry("XGBoost, Complete", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().XGBoost()
		}, "Completed", "AllJobsCompleted", "jobset completed successfully", trainer.TrainJobComplete),
		ginkgo.Entry("XGBoost, Failed", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().XGBoost()
		}, "Failed", "FailedJobs", "jobset failed due to one or more job failures", trainer.TrainJobFailed),
		ginkgo.Entry("Flux, Complete", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().Flux(&trainer.FluxMLPolicySource{})
		}, "Completed", "AllJobsCompleted", "jobset completed successfully", trainer.TrainJobComplete),
		ginkgo.Entry("Flux, Failed", func() *utiltesting.TrainingRuntimeSpecWrapper {
			return utiltesting.MakeTrainingRuntimeSpecWrapper().Flux(&trainer.FluxMLPolicySource{})
		}, "Failed", "FailedJobs", "jobset failed due to one or more job failures", trainer.TrainJobFailed),
	)

	ginkgo.It("snapshots ClusterTrainingRuntimes too, and back-fills a missing snapshot", func() {
		ns := newNamespace()
		ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("snap-" + ns).Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, ctr)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, ctr))).To(gomega.Succeed()) })
		tj := utiltesting.MakeTrainJobWrapper(ns, "job").RuntimeRef(trainer.ClusterTrainingRuntimeKind, ctr.Name).Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		snapshot := func(g gomega.Gomega) {
			cm := &corev1.ConfigMap{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "job-runtime-snapshot"}, cm)).To(gomega.Succeed())
			g.Expect(cm.Data["runtime"]).To(gomega.ContainSubstring("kind: ClusterTrainingRuntime"))
			g.Expect(cm.Data["runtime"]).To(gomega.ContainSubstring("name: " + ctr.Name))
			owner := metav1.GetControllerOf(cm)
			g.Expect(owner).NotTo(gomega.BeNil())
			g.Expect(owner.Name).To(gomega.Equal("job"))
		}
		gomega.Eventually(snapshot, util.Timeout, util.Interval).Should(gomega.Succeed())

		ginkgo.By("deleting the snapshot, as for a TrainJob created before snapshots existed; the next reconcile writes it again")
		gomega.Expect(k8sClient.Delete(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "job-runtime-snapshot"}})).To(gomega.Succeed())
		gomega.Eventually(snapshot, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})
