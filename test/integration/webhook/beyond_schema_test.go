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
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// Gantry's CRDs are Kubeflow Trainer's, so the checks its CRDs used to make beyond the
// reference's are the webhook's: the same field paths, as 403s, on create and on update, as
// the schema made them (docs/compatibility.md lists each).
var _ = ginkgo.Describe("Checks beyond Kubeflow Trainer's schema", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
		rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
			utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	})
	job := func(name string) *utiltesting.TrainJobWrapper {
		return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "torch")
	}
	const immutable = "Invalid value: field is immutable: it cannot be added or removed after the TrainJob is created"

	ginkgo.It("refuses a TrainJob without spec", func() {
		tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-spec"}}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(beForbidden("spec: Required value: a TrainJob needs a spec, with at least spec.runtimeRef"))
	})

	ginkgo.It("refuses runtimes without spec or template, on create and on update", func() {
		noSpec := utiltesting.MakeTrainingRuntimeWrapper(ns, "no-spec").Spec(trainer.TrainingRuntimeSpec{}).Obj()
		gomega.Expect(k8sClient.Create(ctx, noSpec)).To(beForbidden("spec: Required value: a runtime needs a spec, with at least spec.template"))
		noTemplate := utiltesting.MakeClusterTrainingRuntimeWrapper("no-template-" + ns).
			Spec(trainer.TrainingRuntimeSpec{MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1)}}).Obj()
		gomega.Expect(k8sClient.Create(ctx, noTemplate)).To(beForbidden(
			"spec.template: Required value: a runtime needs a template, the JobSet its TrainJobs run"))

		rt := &trainer.TrainingRuntime{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "torch"}, rt)).To(gomega.Succeed())
		rt.Spec.Template = trainer.JobSetTemplateSpec{}
		gomega.Expect(k8sClient.Update(ctx, rt)).To(beForbidden("spec.template: Required value"))
		// An empty template is not an absent one: it has no replicated job.
		gomega.Expect(k8sClient.Patch(ctx, rt, client.RawPatch(types.MergePatchType,
			[]byte(`{"spec": {"template": {"spec": {"replicatedJobs": null, "network": {"enableDNSHostnames": true}}}}}`)))).
			To(beForbidden("spec.template.spec.replicatedJobs: Required value: a runtime needs at least one replicated job"))
	})

	ginkgo.DescribeTable("refuses adding or removing an immutable field after creation, by update or patch",
		func(initial func() *trainer.TrainJob, change func(*trainer.TrainJob), patch, field string) {
			tj := initial()
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			updated := tj.DeepCopy()
			change(updated)
			gomega.Expect(k8sClient.Update(ctx, updated)).To(beForbidden(field + ": " + immutable))
			gomega.Expect(k8sClient.Patch(ctx, tj, client.RawPatch(types.MergePatchType, []byte(patch)))).
				To(beForbidden(field + ": " + immutable))
		},
		ginkgo.Entry("trainer, added", func() *trainer.TrainJob { return job("add-trainer").Obj() },
			func(tj *trainer.TrainJob) { tj.Spec.Trainer = utiltesting.MakeTrainerWrapper().NumNodes(2).Obj() },
			`{"spec": {"trainer": {"numNodes": 2}}}`, "spec.trainer"),
		ginkgo.Entry("trainer, removed", func() *trainer.TrainJob {
			return job("remove-trainer").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()).Obj()
		}, func(tj *trainer.TrainJob) { tj.Spec.Trainer = nil }, `{"spec": {"trainer": null}}`, "spec.trainer"),
		ginkgo.Entry("initializer, added", func() *trainer.TrainJob { return job("add-initializer").Obj() },
			func(tj *trainer.TrainJob) {
				tj.Spec.Initializer = &trainer.Initializer{Model: &trainer.ModelInitializer{StorageUri: ptr.To("hf://m/m")}}
			}, `{"spec": {"initializer": {"model": {"storageUri": "hf://m/m"}}}}`, "spec.initializer"),
		ginkgo.Entry("initializer, removed", func() *trainer.TrainJob {
			return job("remove-initializer").DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("hf://d/d")}).Obj()
		}, func(tj *trainer.TrainJob) { tj.Spec.Initializer = nil }, `{"spec": {"initializer": null}}`, "spec.initializer"),
		ginkgo.Entry("activeDeadlineSeconds, added", func() *trainer.TrainJob { return job("add-deadline").Obj() },
			func(tj *trainer.TrainJob) { tj.Spec.ActiveDeadlineSeconds = ptr.To[int64](60) },
			`{"spec": {"activeDeadlineSeconds": 60}}`, "spec.activeDeadlineSeconds"),
		ginkgo.Entry("activeDeadlineSeconds, removed", func() *trainer.TrainJob { return job("remove-deadline").ActiveDeadlineSeconds(60).Obj() },
			func(tj *trainer.TrainJob) { tj.Spec.ActiveDeadlineSeconds = nil }, `{"spec": {"activeDeadlineSeconds": null}}`,
			"spec.activeDeadlineSeconds"),
	)

	ginkgo.It("refuses runtime patch names over 63 characters, on create and on update", func() {
		long := "a" + strings.Repeat("b", 63)
		const jobPath = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
		longJob := job("long-job").RuntimePatches(utiltesting.MakeRuntimePatchWrapper("example.com/x").
			PodSpec(long, trainer.PodSpecPatch{}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, longJob)).To(beForbidden(jobPath + `.name: Invalid value: "` + long +
			`": must be no more than 63 characters: JobSet names the replicated job's Jobs <TrainJob name>-<replicated job>-<index>, ` +
			"which must be DNS labels (RFC 1035)"))
		longInit := job("long-init").RuntimePatches(utiltesting.MakeRuntimePatchWrapper("example.com/x").
			PodSpec("node", trainer.PodSpecPatch{InitContainers: []trainer.ContainerPatch{{Name: long}}}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, longInit)).To(beForbidden(jobPath + ".template.spec.template.spec.initContainers[0].name: " +
			`Invalid value: "` + long + `": must be no more than 63 characters: a container's name is a DNS label (RFC 1123)`))

		suspended := job("long-container").Suspend(true).Obj()
		gomega.Expect(k8sClient.Create(ctx, suspended)).To(gomega.Succeed())
		suspended.Spec.RuntimePatches = []trainer.RuntimePatch{utiltesting.MakeRuntimePatchWrapper("example.com/x").
			PodSpec("node", trainer.PodSpecPatch{Containers: []trainer.ContainerPatch{{Name: long}}}).Obj()}
		gomega.Expect(k8sClient.Update(ctx, suspended)).To(beForbidden(jobPath + ".template.spec.template.spec.containers[0].name: " +
			`Invalid value: "` + long + `": must be no more than 63 characters`))
	})
})
