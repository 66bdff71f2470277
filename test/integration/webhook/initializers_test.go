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
	"fmt"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/util/rand"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// Kubeflow Trainer v2.3 finds a runtime's initializer jobs by name and checks them only when a
// TrainJob asks for an initializer; these specs hold Gantry to the same decisions and messages,
// for both runtime kinds, through the API server.
var _ = ginkgo.Describe("Initializer jobs, as Kubeflow Trainer v2.3 judges them", func() {
	type runtimeKind struct {
		kind string
		// create makes a runtime with spec for TrainJobs in ns; a ClusterTrainingRuntime is
		// deleted when the spec ends.
		create func(ns string, spec trainer.TrainingRuntimeSpec) client.Object
	}
	namespaced := runtimeKind{trainer.TrainingRuntimeKind, func(ns string, spec trainer.TrainingRuntimeSpec) client.Object {
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "rt").Spec(spec).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		return rt
	}}
	clusterScoped := runtimeKind{trainer.ClusterTrainingRuntimeKind, func(ns string, spec trainer.TrainingRuntimeSpec) client.Object {
		rt := utiltesting.MakeClusterTrainingRuntimeWrapper("init-" + ns).Spec(spec).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
		ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, rt))).To(gomega.Succeed()) })
		return rt
	}}
	withDataset := func(uri string) func(*utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper {
		return func(w *utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper {
			return w.DatasetInitializer(&trainer.DatasetInitializer{StorageUri: &uri})
		}
	}
	withModel := func(uri string) func(*utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper {
		return func(w *utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper {
			return w.ModelInitializer(&trainer.ModelInitializer{StorageUri: &uri})
		}
	}
	trainJob := func(ns string, rt client.Object, kind string, name string) *utiltesting.TrainJobWrapper {
		return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(kind, rt.GetName())
	}

	for _, k := range []runtimeKind{namespaced, clusterScoped} {
		ginkgo.DescribeTable(fmt.Sprintf("accepts TrainJobs with initializers for a %s that has the initializer jobs", k.kind),
			func(initializer func(*utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper) {
				ns := newNamespace()
				rt := k.create(ns, utiltesting.MakeTrainingRuntimeSpecWrapper().Obj())
				gomega.Expect(k8sClient.Create(ctx, initializer(trainJob(ns, rt, k.kind, "tj")).Obj())).To(gomega.Succeed())
			},
			ginkgo.Entry("a dataset with an empty storageUri", withDataset("")),
			ginkgo.Entry("a dataset with a storageUri", withDataset("hf://tatsu-lab/alpaca")),
			ginkgo.Entry("a model with an empty storageUri", withModel("")),
			ginkgo.Entry("a model with a storageUri", withModel("hf://meta-llama/Llama-3.2-1B-Instruct")),
		)

		ginkgo.DescribeTable(fmt.Sprintf("refuses at spec.runtimeRef a TrainJob whose %s lacks the initializer job", k.kind),
			func(initializer func(*utiltesting.TrainJobWrapper) *utiltesting.TrainJobWrapper, drop, message string) {
				ns := newNamespace()
				spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
				// Renamed, the job keeps its ancestor label: the reference goes by the name alone.
				utiltesting.Job(spec.Template.Spec.ReplicatedJobs, drop).Name = "fetch"
				rt := k.create(ns, spec)
				gomega.Expect(k8sClient.Create(ctx, initializer(trainJob(ns, rt, k.kind, "tj")).Obj())).
					To(beForbidden("spec.runtimeRef: Invalid value: "), "the field path")
				gomega.Expect(k8sClient.Create(ctx, initializer(trainJob(ns, rt, k.kind, "tj")).Obj())).To(beForbidden(message))
			},
			ginkgo.Entry("dataset", withDataset(""), utiltesting.DatasetInitializer,
				"must have dataset-initializer job when trainJob is configured with input datasetConfig"),
			ginkgo.Entry("model", withModel(""), utiltesting.ModelInitializer,
				"must have model-initializer job when trainJob is configured with input modelConfig"),
		)
	}

	ginkgo.It("accepts a ClusterTrainingRuntime created before the TrainJob's namespace and updated after it", func() {
		rt := clusterScoped.create("early-"+rand.String(5), utiltesting.MakeTrainingRuntimeSpecWrapper().Obj())
		ns := newNamespace()
		gomega.Eventually(func() error {
			if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(rt), rt); err != nil {
				return err
			}
			rt.SetLabels(map[string]string{"example.com/updated": "true"})
			return k8sClient.Update(ctx, rt)
		}).Should(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, withDataset("hf://tatsu-lab/alpaca")(withModel("")(
			trainJob(ns, rt, trainer.ClusterTrainingRuntimeKind, "tj"))).Obj())).To(gomega.Succeed())
	})

	ginkgo.It("accepts a TrainingRuntime update that drops an initializer container, then refuses a TrainJob that needs it", func() {
		ns := newNamespace()
		rt := namespaced.create(ns, utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()).(*trainer.TrainingRuntime)
		gomega.Expect(k8sClient.Create(ctx, withDataset("")(trainJob(ns, rt, trainer.TrainingRuntimeKind, "before")).Obj())).
			To(gomega.Succeed())
		utiltesting.Job(rt.Spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).
			Template.Spec.Template.Spec.Containers[0].Name = "loader"
		gomega.Expect(k8sClient.Update(ctx, rt)).To(gomega.Succeed())
		gomega.Expect(k8sClient.Create(ctx, withDataset("")(trainJob(ns, rt, trainer.TrainingRuntimeKind, "after")).Obj())).
			To(beForbidden(`spec.runtimeRef: Invalid value: {"name":"rt","apiGroup":"trainer.kubeflow.org","kind":"TrainingRuntime"}: ` +
				"must have container with name - dataset-initializer in the dataset-initializer job"))
		// A TrainJob without a dataset does not need the container.
		gomega.Expect(k8sClient.Create(ctx, trainJob(ns, rt, trainer.TrainingRuntimeKind, "plain").Obj())).To(gomega.Succeed())
	})

	ginkgo.It("refuses a ClusterTrainingRuntime update that drops an initializer container, as the reference does", func() {
		rt := clusterScoped.create(newNamespace(), utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()).(*trainer.ClusterTrainingRuntime)
		utiltesting.Job(rt.Spec.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).
			Template.Spec.Template.Spec.Containers[0].Name = "loader"
		gomega.Expect(k8sClient.Update(ctx, rt)).To(beForbidden(
			"spec.template.spec.replicatedJobs[1].template.spec.template.spec.containers: Invalid value: "))
		gomega.Expect(k8sClient.Update(ctx, rt)).To(beForbidden("must contain the required container for the ancestor: model-initializer"))
	})
})
