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
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/manifest"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// strict makes the apiserver refuse any field the schema does not know, instead of pruning it, so
// a fixture that is accepted is also stored whole.
var strict = &client.CreateOptions{Raw: &metav1.CreateOptions{FieldValidation: metav1.FieldValidationStrict}}

var _ = ginkgo.Describe("Shipped runtimes and examples", func() {
	ginkgo.It("accepts every shipped ClusterTrainingRuntime, with its framework label", func() {
		files, err := filepath.Glob(filepath.Join(util.RepoRoot(), "config", "runtimes", "*.yaml"))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var names []string
		for _, f := range files {
			if filepath.Base(f) == "kustomization.yaml" {
				continue
			}
			for _, obj := range readObjects(f) {
				gomega.Expect(obj.GetKind()).To(gomega.Equal(trainer.ClusterTrainingRuntimeKind), f)
				gomega.Expect(obj.GetLabels()).To(gomega.HaveKey(trainer.FrameworkLabel), f)
				gomega.Expect(obj.GetLabels()).To(gomega.HaveKeyWithValue(
					trainer.WebhookValidationLabel, trainer.WebhookValidationDisabled), f)
				gomega.Expect(k8sClient.Create(ctx, obj, strict)).To(gomega.Succeed(), f)
				ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, obj)).To(gomega.Succeed()) })
				names = append(names, obj.GetName())
			}
		}
		gomega.Expect(names).To(gomega.ConsistOf(
			"torch-distributed", "deepspeed-distributed", "mlx-distributed", "jax-distributed",
			"xgboost-distributed", "torchtune-llama3.2-1b", "torchtune-llama3.2-3b", "torchtune-qwen2.5-1.5b"))
	})

	ginkgo.It("accepts every example without dropping a field", func() {
		ns := newNamespace()
		files, err := filepath.Glob(filepath.Join(util.RepoRoot(), "examples", "*.yaml"))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(files).NotTo(gomega.BeEmpty())
		for _, f := range files {
			for _, obj := range readObjects(f) {
				if obj.GetKind() == trainer.ClusterTrainingRuntimeKind {
					ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, obj)).To(gomega.Succeed()) })
				} else {
					obj.SetNamespace(ns)
				}
				want := obj.DeepCopy()
				gomega.Expect(k8sClient.Create(ctx, obj, strict)).To(gomega.Succeed(), f)

				got := &unstructured.Unstructured{}
				got.SetGroupVersionKind(obj.GroupVersionKind())
				gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), got)).To(gomega.Succeed())
				// Every field the example sets comes back unchanged (defaults may add more).
				gomega.Expect(got.Object["spec"]).To(containSubset(want.Object["spec"]), f)
			}
		}
	})

	ginkgo.It("documents the fields for kubectl explain", func() {
		out, err := fwk.Kubectl("explain", "trainjob.spec.trainer")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.ContainSubstring("numNodes"))
		gomega.Expect(out).To(gomega.ContainSubstring("numNodes is the number of training nodes"))
		gomega.Expect(out).To(gomega.ContainSubstring("resourcesPerNode"))
	})

	ginkgo.It("shows whole descriptions, not a 128-character cut", func() {
		out, err := fwk.Kubectl("explain", "trainjob.spec.runtimePatches")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		// kubectl wraps the text; compare it with the line breaks folded.
		gomega.Expect(strings.Join(strings.Fields(out), " ")).To(gomega.ContainSubstring(
			"They may change only while the TrainJob is suspended before or after the change, " +
				"and never while a replicated job is active."))
	})
})

// readObjects decodes every document of a YAML file.
func readObjects(path string) []*unstructured.Unstructured {
	objs, err := manifest.ReadFile(path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return objs
}

var _ = ginkgo.Describe("kubectl get trainjobs", func() {
	ginkgo.It("shows a resumed, running job without a State, its node Jobs, and a suspended one as Suspended, in State and in Suspended", func() {
		ns := newNamespace()
		running := utiltesting.MakeTrainJobWrapper(ns, "running").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(4).Obj()).Obj()
		paused := utiltesting.MakeTrainJobWrapper(ns, "paused").Suspend(true).Obj()
		for _, tj := range []*trainer.TrainJob{running, paused} {
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		}
		running.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionFalse,
			Reason: trainer.TrainJobResumedReason, Message: trainer.TrainJobResumedMessage, LastTransitionTime: metav1.Now()}}
		gomega.Expect(k8sClient.Status().Update(ctx, running)).To(gomega.Succeed())
		paused.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionTrue,
			Reason: trainer.TrainJobSuspendedReason, Message: trainer.TrainJobSuspendedMessage, LastTransitionTime: metav1.Now()}}
		gomega.Expect(k8sClient.Status().Update(ctx, paused)).To(gomega.Succeed())

		out, err := fwk.Kubectl("get", "trainjobs", "-n", ns, "--no-headers", "-o", "custom-columns=NAME:.metadata.name")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.ContainSubstring("running"))
		running.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{
			ProgressPercentage: ptr.To[int32](42), EstimatedRemainingSeconds: ptr.To[int32](795), LastUpdatedTime: metav1.Now()}
		running.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](1),
			Succeeded: ptr.To[int32](0), Failed: ptr.To[int32](0), Suspended: ptr.To[int32](0)}}
		gomega.Expect(k8sClient.Status().Update(ctx, running)).To(gomega.Succeed())
		table, err := fwk.Kubectl("get", "tj", "-n", ns)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(table).To(gomega.MatchRegexp(`NAME\s+STATE\s+SUSPENDED\s+RUNTIME\s+NODES\s+ACTIVE\s+READY\s+FAILED\s+PROGRESS\s+ETA\s+AGE\n`))
		gomega.Expect(table).To(gomega.MatchRegexp(`(?m)^paused\s+Suspended\s+true\s+torch-distributed\s+\d+s$`))
		gomega.Expect(table).To(gomega.MatchRegexp(`(?m)^running\s+false\s+torch-distributed\s+4\s+1\s+1\s+0\s+42\s+795\s+\d+s$`))
		wide, err := fwk.Kubectl("get", "trainjobs", "-n", ns, "-o", "wide")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(wide).To(gomega.MatchRegexp(`NAME\s+STATE\s+SUSPENDED\s+RUNTIME\s+NODES\s+ACTIVE\s+READY\s+FAILED\s+PROGRESS\s+ETA\s+AGE\s+MESSAGE\n`))
		gomega.Expect(wide).To(gomega.MatchRegexp(`(?m)^paused\s+Suspended\s+true\s+torch-distributed\s+\d+s\s+` + trainer.TrainJobSuspendedMessage + `$`))
	})

	ginkgo.It("knows the short names tj, tr, trt and ctr", func() {
		out, err := fwk.Kubectl("api-resources", "--api-group", trainer.GroupVersion.Group, "--no-headers")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(out).To(gomega.MatchRegexp(`(?m)^clustertrainingruntimes\s+ctr\s+\S+\s+false\s+ClusterTrainingRuntime$`))
		gomega.Expect(out).To(gomega.MatchRegexp(`(?m)^trainingruntimes\s+tr,trt\s+\S+\s+true\s+TrainingRuntime$`))
		gomega.Expect(out).To(gomega.MatchRegexp(`(?m)^trainjobs\s+tj\s+\S+\s+true\s+TrainJob$`))
	})
})
