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

package schema

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("Runtime schema", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
	})

	ginkgo.It("applies the MPI, coscheduling and flux defaults", func() {
		mpi := utiltesting.MakeTrainingRuntimeWrapper(ns, "mpi").Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().
			MPI(&trainer.MPIMLPolicySource{}).Coscheduling(&trainer.CoschedulingPodGroupPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, mpi)).To(gomega.Succeed())
		got := &trainer.TrainingRuntime{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(mpi), got)).To(gomega.Succeed())
		gomega.Expect(got.Spec.MLPolicy.MPI).To(gomega.Equal(&trainer.MPIMLPolicySource{
			NumProcPerNode:    ptr.To[int32](1),
			MPIImplementation: ptr.To(trainer.MPIImplementationOpenMPI),
			SSHAuthMountPath:  ptr.To("/root/.ssh"),
			RunLauncherAsNode: ptr.To(false),
		}))
		gomega.Expect(got.Spec.PodGroupPolicy.Coscheduling.ScheduleTimeoutSeconds).To(gomega.Equal(ptr.To[int32](60)))

		flux := utiltesting.MakeClusterTrainingRuntimeWrapper("flux-defaults").Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().
			Flux(&trainer.FluxMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, flux)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, flux)).To(gomega.Succeed()) })
		gotFlux := &trainer.ClusterTrainingRuntime{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(flux), gotFlux)).To(gomega.Succeed())
		gomega.Expect(gotFlux.Spec.MLPolicy.Flux.NumProcPerNode).To(gomega.Equal(ptr.To[int32](1)))
	})

	ginkgo.DescribeTable("accepts each single ML policy",
		func(spec *utiltesting.TrainingRuntimeSpecWrapper) {
			rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "single").Spec(spec.Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		},
		ginkgo.Entry("torch", utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{})),
		ginkgo.Entry("mpi", utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{})),
		ginkgo.Entry("jax", utiltesting.MakeTrainingRuntimeSpecWrapper().JAX()),
		ginkgo.Entry("xgboost", utiltesting.MakeTrainingRuntimeSpecWrapper().XGBoost()),
		ginkgo.Entry("flux", utiltesting.MakeTrainingRuntimeSpecWrapper().Flux(&trainer.FluxMLPolicySource{})),
		ginkgo.Entry("none (plain ML)", utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(3)),
		ginkgo.Entry("torch with envInjection", utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{
			EnvInjection: &trainer.TorchEnvInjection{Targets: []trainer.TorchEnvInjectionTarget{
				{JobName: "node", ContainerNames: []string{"sidecar"}},
			}},
		})),
	)

	ginkgo.DescribeTable("rejects invalid runtimes with a 422 naming the field",
		func(spec *utiltesting.TrainingRuntimeSpecWrapper, field, message string) {
			rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "invalid").Spec(spec.Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, rt)).To(util.BeInvalidError(field, message))
			ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("invalid").Spec(spec.Obj()).Obj()
			gomega.Expect(k8sClient.Create(ctx, ctr)).To(util.BeInvalidError(field, message))
		},
		ginkgo.Entry("torch and mpi", utiltesting.MakeTrainingRuntimeSpecWrapper().
			Torch(&trainer.TorchMLPolicySource{}).MPI(&trainer.MPIMLPolicySource{}),
			"spec.mlPolicy", "Only one of the policy can be configured"),
		ginkgo.Entry("all five policies", utiltesting.MakeTrainingRuntimeSpecWrapper().
			Torch(&trainer.TorchMLPolicySource{}).MPI(&trainer.MPIMLPolicySource{}).JAX().XGBoost().
			Flux(&trainer.FluxMLPolicySource{}),
			"spec.mlPolicy", "Only one of the policy can be configured"),
		ginkgo.Entry("jax and xgboost", utiltesting.MakeTrainingRuntimeSpecWrapper().JAX().XGBoost(),
			"spec.mlPolicy", "Only one of the policy can be configured"),
		ginkgo.Entry("MPI numProcPerNode 0", utiltesting.MakeTrainingRuntimeSpecWrapper().
			MPI(&trainer.MPIMLPolicySource{NumProcPerNode: ptr.To[int32](0)}),
			"spec.mlPolicy.mpi.numProcPerNode", "NumProcPerNode in mpiPolicy must be >= 1"),
		ginkgo.Entry("an unsupported MPI implementation", utiltesting.MakeTrainingRuntimeSpecWrapper().
			MPI(&trainer.MPIMLPolicySource{MPIImplementation: ptr.To(trainer.MPIImplementationIntel)}),
			"spec.mlPolicy.mpi.mpiImplementation", "Unsupported value"),
		ginkgo.Entry("flux numProcPerNode 0", utiltesting.MakeTrainingRuntimeSpecWrapper().
			Flux(&trainer.FluxMLPolicySource{NumProcPerNode: ptr.To[int32](0)}),
			"spec.mlPolicy.flux.numProcPerNode", "NumProcPerNode in fluxPolicy must be >= 1"),
		ginkgo.Entry("envInjection naming the node container", utiltesting.MakeTrainingRuntimeSpecWrapper().
			Torch(&trainer.TorchMLPolicySource{EnvInjection: &trainer.TorchEnvInjection{
				Targets: []trainer.TorchEnvInjectionTarget{{JobName: "node", ContainerNames: []string{"sidecar", "node"}}},
			}}),
			"spec.mlPolicy.torch.envInjection.targets[0].containerNames",
			"containerNames must not include the main node container because PET_* envs are always injected into it"),
		ginkgo.Entry("envInjection without containers", utiltesting.MakeTrainingRuntimeSpecWrapper().
			Torch(&trainer.TorchMLPolicySource{EnvInjection: &trainer.TorchEnvInjection{
				Targets: []trainer.TorchEnvInjectionTarget{{JobName: "node", ContainerNames: []string{}}},
			}}),
			"spec.mlPolicy.torch.envInjection.targets[0].containerNames", "should have at least 1 items"),
		ginkgo.Entry("JobSet's startupPolicy together with dependsOn", startupAndDependsOn(),
			"spec.template.spec", "StartupPolicy and DependsOn APIs are mutually exclusive"),
	)

	// Kubeflow Trainer's schema, which Gantry's is, admits both; Gantry's webhook refuses them
	// (test/integration/webhook's "Checks beyond Kubeflow Trainer's schema").
	ginkgo.It("admits a runtime without template, or without spec, as Kubeflow Trainer's schema does", func() {
		noTemplate := utiltesting.MakeTrainingRuntimeWrapper(ns, "no-template").Spec(trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1)},
		}).Obj()
		gomega.Expect(k8sClient.Create(ctx, noTemplate)).To(gomega.Succeed())
		noSpec := utiltesting.MakeClusterTrainingRuntimeWrapper("no-spec-" + ns).Spec(trainer.TrainingRuntimeSpec{}).Obj()
		gomega.Expect(k8sClient.Create(ctx, noSpec)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, noSpec)).To(gomega.Succeed()) })
	})

	ginkgo.It("inherits JobSet's immutability of the failure policy", func() {
		spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
		spec.Template.Spec.FailurePolicy = &jobsetv1alpha2.FailurePolicy{MaxRestarts: 1}
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "immutable-failure").Spec(spec).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		rt.Spec.Template.Spec.FailurePolicy.MaxRestarts = 5
		gomega.Expect(k8sClient.Update(ctx, rt)).To(
			util.BeInvalidError("spec.template.spec.failurePolicy", "Value is immutable"))
	})
})

func startupAndDependsOn() *utiltesting.TrainingRuntimeSpecWrapper {
	w := utiltesting.MakeTrainingRuntimeSpecWrapper()
	w.Template.Spec.StartupPolicy = &jobsetv1alpha2.StartupPolicy{StartupPolicyOrder: jobsetv1alpha2.InOrder}
	utiltesting.Job(w.Template.Spec.ReplicatedJobs, utiltesting.Node).DependsOn = []jobsetv1alpha2.DependsOn{
		{Name: utiltesting.DatasetInitializer, Status: jobsetv1alpha2.DependencyComplete},
	}
	return w
}
