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
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

const immutable = "field is immutable"

var _ = ginkgo.Describe("TrainJob schema", func() {
	var ns string

	ginkgo.BeforeEach(func() {
		ns = newNamespace()
	})

	ginkgo.It("applies the schema defaults", func() {
		tj := utiltesting.MakeTrainJobWrapper(ns, "defaults").Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())

		got := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), got)).To(gomega.Succeed())
		gomega.Expect(got.Spec.Suspend).To(gomega.Equal(ptr.To(false)))
		gomega.Expect(got.Spec.ManagedBy).To(gomega.Equal(ptr.To(trainer.ManagedByTrainJobController)))
		gomega.Expect(got.Spec.RuntimeRef.APIGroup).To(gomega.Equal(ptr.To(trainer.DefaultRuntimeRefAPIGroup)))
		gomega.Expect(got.Spec.RuntimeRef.Kind).To(gomega.Equal(ptr.To(trainer.ClusterTrainingRuntimeKind)))
	})

	ginkgo.DescribeTable("accepts valid TrainJobs",
		func(name string, tj func(ns, name string) *trainer.TrainJob) {
			gomega.Expect(k8sClient.Create(ctx, tj(ns, name))).To(gomega.Succeed())
		},
		ginkgo.Entry("a name of exactly 63 characters", "a"+strings.Repeat("b", 61)+"c", plain),
		ginkgo.Entry("a name with hyphens", "my-train-job-2", plain),
		ginkgo.Entry("managedBy the built-in controller", "mb-default", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).ManagedBy(trainer.ManagedByTrainJobController).Obj()
		}),
		ginkgo.Entry("managedBy MultiKueue", "mb-multikueue", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).ManagedBy(trainer.ManagedByMultiKueue).Obj()
		}),
		ginkgo.Entry("numNodes 0", "nodes-zero", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(utiltesting.MakeTrainerWrapper().NumNodes(0).Obj()).Obj()
		}),
		ginkgo.Entry("an empty storageUri", "uri-empty", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).
				DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("")}).Obj()
		}),
		ginkgo.Entry("hf and s3 storageUris", "uri-valid", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).
				DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("hf://tatsu-lab/alpaca")}).
				ModelInitializer(&trainer.ModelInitializer{StorageUri: ptr.To("s3://bucket/models/llama")}).Obj()
		}),
		ginkgo.Entry("a command item of the maximum length", "cmd-max", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(&trainer.Trainer{
				Command: []string{strings.Repeat("x", 1048576)},
			}).Obj()
		}),
		ginkgo.Entry("16 runtime patches", "patches-16", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(patches(16)...).Obj()
		}),
		ginkgo.Entry("terminationGracePeriodSeconds 0 in a patch", "tgps-zero", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(
				utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerSDK).
					PodSpec("node", trainer.PodSpecPatch{TerminationGracePeriodSeconds: ptr.To[int64](0)}).Obj()).Obj()
		}),
	)

	ginkgo.DescribeTable("rejects invalid TrainJobs with a 422 naming the field",
		func(name string, tj func(ns, name string) *trainer.TrainJob, field, message string) {
			gomega.Expect(k8sClient.Create(ctx, tj(ns, name))).To(util.BeInvalidError(field, message))
		},
		ginkgo.Entry("a name with a leading digit", "1abc", plain,
			"", "metadata.name must match RFC 1035 DNS label format"),
		ginkgo.Entry("a name with a trailing hyphen", "abc-", plain,
			"", "metadata.name must match RFC 1035 DNS label format"),
		ginkgo.Entry("a name of 64 characters", strings.Repeat("a", 64), plain,
			"", "metadata.name must be no more than 63 characters"),
		ginkgo.Entry("an unknown managedBy", "mb-bad", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).ManagedBy("example.com/controller").Obj()
		}, "spec.managedBy", "ManagedBy must be trainer.kubeflow.org/trainjob-controller or kueue.x-k8s.io/multikueue if set"),
		ginkgo.Entry("a negative numNodes", "nodes-neg", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(utiltesting.MakeTrainerWrapper().NumNodes(-1).Obj()).Obj()
		}, "spec.trainer.numNodes", "should be greater than or equal to 0"),
		ginkgo.Entry("numProcPerNode 0", "procs-zero", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(utiltesting.MakeTrainerWrapper().NumProcPerNode(0).Obj()).Obj()
		}, "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1"),
		ginkgo.Entry("a negative numProcPerNode", "procs-neg", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(utiltesting.MakeTrainerWrapper().NumProcPerNode(-2).Obj()).Obj()
		}, "spec.trainer.numProcPerNode", "numProcPerNode must be greater than or equal to 1"),
		ginkgo.Entry("a dataset storageUri without a scheme", "uri-noscheme", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).
				DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("tatsu-lab/alpaca")}).Obj()
		}, "spec.initializer.dataset.storageUri", "storageUri may be empty, or it must be a valid URI (scheme://...)"),
		ginkgo.Entry("a model storageUri without a path", "uri-nopath", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).
				ModelInitializer(&trainer.ModelInitializer{StorageUri: ptr.To("hf://")}).Obj()
		}, "spec.initializer.model.storageUri", "storageUri may be empty, or it must be a valid URI (scheme://...)"),
		ginkgo.Entry("an activeDeadlineSeconds of 0", "deadline-zero", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).ActiveDeadlineSeconds(0).Obj()
		}, "spec.activeDeadlineSeconds", "should be greater than or equal to 1"),
		ginkgo.Entry("a command item over the maximum length", "cmd-long", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(&trainer.Trainer{
				Command: []string{strings.Repeat("x", 1048577)},
			}).Obj()
		}, "spec.trainer.command[0]", "Too long"),
		ginkgo.Entry("an image over 500 characters", "image-long", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).Trainer(&trainer.Trainer{Image: ptr.To(strings.Repeat("i", 501))}).Obj()
		}, "spec.trainer.image", "Too long"),
		ginkgo.Entry("17 runtime patches", "patches-17", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(patches(17)...).Obj()
		}, "spec.runtimePatches", "Too many"),
		ginkgo.Entry("two runtime patches of one manager", "patches-dup", func(ns, name string) *trainer.TrainJob {
			p := utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).Obj()
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(p, p).Obj()
		}, "spec.runtimePatches[1]", "Duplicate value"),
		ginkgo.Entry("an empty runtime patch manager", "patches-empty", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(utiltesting.MakeRuntimePatchWrapper("").Obj()).Obj()
		}, "spec.runtimePatches[0].manager", "should be at least 1 chars long"),
		ginkgo.Entry("a negative terminationGracePeriodSeconds in a patch", "tgps-neg", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimePatches(
				utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerSDK).
					PodSpec("node", trainer.PodSpecPatch{TerminationGracePeriodSeconds: ptr.To[int64](-1)}).Obj()).Obj()
		}, "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec.terminationGracePeriodSeconds",
			"should be greater than or equal to 0"),
		ginkgo.Entry("a runtimeRef without a name", "ref-noname", func(ns, name string) *trainer.TrainJob {
			return utiltesting.MakeTrainJobWrapper(ns, name).RuntimeRef(trainer.TrainingRuntimeKind, "").Obj()
		}, "spec.runtimeRef.name", "should be at least 1 chars long"),
	)

	// Kubeflow Trainer's schema, which Gantry's is, lets these through; Gantry's webhook refuses
	// them (test/integration/webhook's "Checks beyond Kubeflow Trainer's schema").
	ginkgo.DescribeTable("admits what Kubeflow Trainer's schema admits",
		func(initial func(ns string) *trainer.TrainJob, change func(*trainer.TrainJob)) {
			tj := initial(ns)
			if change == nil {
				gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
				return
			}
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			change(tj)
			gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
		},
		ginkgo.Entry("a TrainJob without spec", func(ns string) *trainer.TrainJob {
			return &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "no-spec"}}
		}, nil),
		ginkgo.Entry("runtime patch names of 253 characters", func(ns string) *trainer.TrainJob {
			return plainInNs(ns)
		}, func(tj *trainer.TrainJob) {
			tj.Spec.RuntimePatches = []trainer.RuntimePatch{utiltesting.MakeRuntimePatchWrapper("example.com/x").
				PodSpec(strings.Repeat("j", 253), trainer.PodSpecPatch{
					InitContainers: []trainer.ContainerPatch{{Name: strings.Repeat("i", 253)}},
					Containers:     []trainer.ContainerPatch{{Name: strings.Repeat("c", 253)}},
				}).Obj()}
		}),
		ginkgo.Entry("trainer, added after creation", plainInNs, func(tj *trainer.TrainJob) {
			tj.Spec.Trainer = utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()
		}),
		ginkgo.Entry("trainer, removed", withTrainer, func(tj *trainer.TrainJob) { tj.Spec.Trainer = nil }),
		ginkgo.Entry("initializer, added after creation", plainInNs, func(tj *trainer.TrainJob) {
			tj.Spec.Initializer = &trainer.Initializer{Model: &trainer.ModelInitializer{StorageUri: ptr.To("hf://m/m")}}
		}),
		ginkgo.Entry("activeDeadlineSeconds, added after creation", plainInNs, func(tj *trainer.TrainJob) {
			tj.Spec.ActiveDeadlineSeconds = ptr.To[int64](60)
		}),
	)

	ginkgo.It("bounds runtime patch names at 253 characters, as Kubeflow Trainer's schema does", func() {
		const path = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
		tj := utiltesting.MakeTrainJobWrapper(ns, "long").RuntimePatches(utiltesting.MakeRuntimePatchWrapper("example.com/x").
			PodSpec(strings.Repeat("j", 254), trainer.PodSpecPatch{
				Containers: []trainer.ContainerPatch{{Name: strings.Repeat("c", 254)}},
			}).Obj()).Obj()
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.SatisfyAll(
			util.BeInvalidError(path+".name", "Too long"),
			util.BeInvalidError(path+".template.spec.template.spec.containers[0].name", "Too long")))
	})

	ginkgo.It("requires all six counts of a jobsStatus entry, which the Python SDK reads", func() {
		tj := plainInNs(ns)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}}
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(gomega.SatisfyAll(
			util.BeInvalidError("status.jobsStatus[0].ready", "Required value"),
			util.BeInvalidError("status.jobsStatus[0].suspended", "Required value")))

		zero := ptr.To[int32](0)
		tj.Status.JobsStatus = []trainer.JobStatus{{Name: strings.Repeat("n", 253), Active: ptr.To[int32](1),
			Ready: zero, Succeeded: zero, Failed: zero, Suspended: zero}}
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(gomega.Succeed())
	})

	ginkgo.DescribeTable("keeps immutable fields immutable",
		func(initial func(ns string) *trainer.TrainJob, change func(*trainer.TrainJob), field string) {
			tj := initial(ns)
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			change(tj)
			gomega.Expect(k8sClient.Update(ctx, tj)).To(util.BeInvalidError(field, immutable))
		},
		ginkgo.Entry("runtimeRef", withTrainer, func(tj *trainer.TrainJob) {
			tj.Spec.RuntimeRef.Name = "other-runtime"
		}, "spec.runtimeRef"),
		ginkgo.Entry("trainer", withTrainer, func(tj *trainer.TrainJob) {
			tj.Spec.Trainer.Image = ptr.To("other:image")
		}, "spec.trainer"),
		ginkgo.Entry("initializer", withInitializer, func(tj *trainer.TrainJob) {
			tj.Spec.Initializer.Dataset.StorageUri = ptr.To("hf://other/dataset")
		}, "spec.initializer"),
		ginkgo.Entry("managedBy", plainInNs, func(tj *trainer.TrainJob) {
			tj.Spec.ManagedBy = ptr.To(trainer.ManagedByMultiKueue)
		}, "spec.managedBy"),
		ginkgo.Entry("activeDeadlineSeconds", withDeadline, func(tj *trainer.TrainJob) {
			tj.Spec.ActiveDeadlineSeconds = ptr.To[int64](7200)
		}, "spec.activeDeadlineSeconds"),
		ginkgo.Entry("a patch's serviceAccountName", withPatch, func(tj *trainer.TrainJob) {
			podSpecPatch(tj).ServiceAccountName = ptr.To("other")
		}, patchPodSpecPath+".serviceAccountName"),
		ginkgo.Entry("a patch's volumes", withPatch, func(tj *trainer.TrainJob) {
			podSpecPatch(tj).Volumes = append(podSpecPatch(tj).Volumes,
				corev1.Volume{Name: "extra", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}})
		}, patchPodSpecPath+".volumes"),
		ginkgo.Entry("a patch's containers", withPatch, func(tj *trainer.TrainJob) {
			podSpecPatch(tj).Containers[0].VolumeMounts = nil
		}, patchPodSpecPath+".containers"),
		ginkgo.Entry("a patch's terminationGracePeriodSeconds", withPatch, func(tj *trainer.TrainJob) {
			podSpecPatch(tj).TerminationGracePeriodSeconds = ptr.To[int64](5)
		}, patchPodSpecPath+".terminationGracePeriodSeconds"),
	)

	ginkgo.It("lets suspend and a patch's scheduling fields change", func() {
		tj := withPatch(ns)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Spec.Suspend = ptr.To(true)
		p := podSpecPatch(tj)
		p.NodeSelector = map[string]string{"pool": "spot"}
		p.Tolerations = []corev1.Toleration{{Key: "spot", Operator: corev1.TolerationOpExists}}
		p.SchedulingGates = []corev1.PodSchedulingGate{{Name: "kueue.x-k8s.io/topology"}}
		p.Affinity = &corev1.Affinity{}
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
	})

	ginkgo.It("lets a manager add and remove its own patch", func() {
		tj := withPatch(ns)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Spec.RuntimePatches = append(tj.Spec.RuntimePatches,
			utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).JobSetLabel("queue", "a").Obj())
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
		tj.Spec.RuntimePatches = tj.Spec.RuntimePatches[1:]
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
	})

	ginkgo.It("requires lastUpdatedTime in trainerStatus", func() {
		tj := plainInNs(ns)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](10)}
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(
			util.BeInvalidError("status.trainerStatus", "lastUpdatedTime is required when trainerStatus is present"))

		tj.Status.TrainerStatus.LastUpdatedTime = metav1.Now()
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(gomega.Succeed())
	})

	ginkgo.It("bounds trainerStatus", func() {
		tj := plainInNs(ns)
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{
			ProgressPercentage: ptr.To[int32](101),
			LastUpdatedTime:    metav1.Now(),
		}
		gomega.Expect(k8sClient.Status().Update(ctx, tj)).To(
			util.BeInvalidError("status.trainerStatus.progressPercentage", "should be less than or equal to 100"))
	})
})

const patchPodSpecPath = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0].template.spec.template.spec"

func plain(ns, name string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, name).Obj()
}

func plainInNs(ns string) *trainer.TrainJob {
	return plain(ns, "job")
}

func withTrainer(ns string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, "job").
		Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", []string{"torchrun"}, nil).NumNodes(2).Obj()).Obj()
}

func withInitializer(ns string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, "job").
		DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("hf://tatsu-lab/alpaca")}).Obj()
}

func withDeadline(ns string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, "job").ActiveDeadlineSeconds(3600).Obj()
}

func withPatch(ns string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, "job").RuntimePatches(
		utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerSDK).PodSpec("node", trainer.PodSpecPatch{
			ServiceAccountName: ptr.To("trainer"),
			Volumes: []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{
				EmptyDir: &corev1.EmptyDirVolumeSource{},
			}}},
			Containers: []trainer.ContainerPatch{{
				Name:         "node",
				VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
			}},
			TerminationGracePeriodSeconds: ptr.To[int64](30),
		}).Obj()).Obj()
}

func podSpecPatch(tj *trainer.TrainJob) *trainer.PodSpecPatch {
	return tj.Spec.RuntimePatches[0].TrainingRuntimeSpec.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
}

func patches(n int) []trainer.RuntimePatch {
	out := make([]trainer.RuntimePatch, n)
	for i := range out {
		out[i] = utiltesting.MakeRuntimePatchWrapper("example.com/manager-" + string(rune('a'+i))).Obj()
	}
	return out
}
