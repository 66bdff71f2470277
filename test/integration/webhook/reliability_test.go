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
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// These specs pin the admission defects the reliability review found (issue 13): each failed
// before its fix.
var _ = ginkgo.Describe("Admission of what can never run", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	named := func(n int) string { return "j" + strings.Repeat("a", n-1) }

	ginkgo.It("refuses at metadata.name a name whose pod names JobSet would refuse, with this runtime's limit", func() {
		// <name>-node-0-1-xxxxx for two nodes: the name may have 63-15 = 48 characters; the
		// dataset-initializer job's pods, <name>-dataset-initializer-0-0-xxxxx, leave 33.
		job := func(name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()).Obj()
		}
		gomega.Expect(k8sClient.Create(ctx, job(named(33)))).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, job(named(34)))).To(beForbidden(
			"metadata.name: Invalid value: \"" + named(34) + "\": must be no more than 33 characters"))
		gomega.Expect(k8sClient.Create(ctx, job(named(49)))).To(beForbidden("metadata.name"))
	})

	ginkgo.DescribeTable("refuses a runtime no TrainJob could ever build from",
		func(mutate func(*trainer.TrainingRuntimeSpec), message string) {
			spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
			mutate(&spec)
			rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "broken").Spec(spec).Obj()
			gomega.Expect(k8sClient.Create(ctx, rt)).To(beForbidden(message))
		},
		ginkgo.Entry("negative replicas of a job the TrainJob does not override", func(s *trainer.TrainingRuntimeSpec) {
			utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Labels = nil
			utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = -1
		}, "spec.template.spec.replicatedJobs[0].replicas: Invalid value: -1: must be greater than or equal to 0"),
		ginkgo.Entry("negative numNodes", func(s *trainer.TrainingRuntimeSpec) {
			s.MLPolicy.NumNodes = ptr.To[int32](-1)
		}, "spec.mlPolicy.numNodes: Invalid value: -1: must be greater than or equal to 0"),
		ginkgo.Entry("negative parallelism", func(s *trainer.TrainingRuntimeSpec) {
			utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Parallelism = ptr.To[int32](-3)
		}, "spec.template.spec.replicatedJobs[0].template.spec.parallelism: Invalid value: -3: must be greater than or equal to 0"),
		ginkgo.Entry("dependsOn a job that does not exist", func(s *trainer.TrainingRuntimeSpec) {
			utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.Node).DependsOn = append(utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.Node).DependsOn,
				jobsetDependsOn("launcher"))
		}, `spec.template.spec.replicatedJobs[2].dependsOn[0].name: Invalid value: "launcher": must name a replicated job listed before "node": `+
			`JobSet refuses the JobSet of every TrainJob of this runtime ("replicatedJob: node cannot depend on replicatedJob: launcher")`),
		ginkgo.Entry("no trainer job for a framework policy", func(s *trainer.TrainingRuntimeSpec) {
			s.Template.Spec.ReplicatedJobs = s.Template.Spec.ReplicatedJobs[:2]
		}, "spec.template.spec.replicatedJobs: Required value: the torch policy needs a replicated job labelled trainer.kubeflow.org/trainjob-ancestor-step: trainer"),
	)

	ginkgo.It("lets TrainJob updates through after the runtime is deleted: suspend, labels, finalizers", func() {
		tj := utiltesting.MakeTrainJobWrapper(ns, "orphaned").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
		tj.Finalizers = []string{"example.com/hold"}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Delete(ctx, utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Obj())).To(gomega.Succeed())
		update := func(change func(*trainer.TrainJob)) error {
			cur := &trainer.TrainJob{}
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur); err != nil {
				return err
			}
			change(cur)
			return k8sClient.Update(ctx, cur)
		}
		gomega.Expect(update(func(t *trainer.TrainJob) { t.Spec.Suspend = ptr.To(true) })).To(gomega.Succeed(), "Kueue's preemption")
		gomega.Expect(update(func(t *trainer.TrainJob) { t.Labels = map[string]string{"team": "a"} })).To(gomega.Succeed())
		gomega.Expect(k8sClient.Delete(ctx, tj)).To(gomega.Succeed())
		gomega.Expect(update(func(t *trainer.TrainJob) { controllerutil.RemoveFinalizer(t, "example.com/hold") })).
			To(gomega.Succeed(), "the garbage collector's removal of foregroundDeletion")
		gomega.Eventually(func() bool {
			err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), &trainer.TrainJob{})
			return client.IgnoreNotFound(err) == nil && err != nil
		}, util.Timeout, util.Interval).Should(gomega.BeTrue())
	})
})

var _ = metav1.Now

func jobsetDependsOn(name string) jobsetv1alpha2.DependsOn {
	return jobsetv1alpha2.DependsOn{Name: name, Status: jobsetv1alpha2.DependencyComplete}
}
