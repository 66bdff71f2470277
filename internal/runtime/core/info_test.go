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

package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func quantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestNewInfoMetadataAndCounts(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(4).Torch(&trainer.TorchMLPolicySource{}).Obj()
	spec.Template.Metadata.Labels = map[string]string{"team": "a", "tier": "runtime"}
	spec.Template.Metadata.Annotations = map[string]string{"note": "runtime"}
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Parallelism = ptr.To[int32](3)
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Spec.Parallelism = ptr.To[int32](0)
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = 2
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").RuntimePatches(
		utiltesting.MakeRuntimePatchWrapper("a.io/one").JobSetLabel("tier", "patch-1").Obj(),
		utiltesting.MakeRuntimePatchWrapper("b.io/two").JobSetLabel("tier", "patch-2").JobSetLabel("extra", "x").Obj(),
	).Obj()

	info, err := NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"team": "a", "tier": "patch-2", "extra": "x"}, info.Labels); diff != "" {
		t.Errorf("labels (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"note": "runtime"}, info.Annotations); diff != "" {
		t.Errorf("annotations (-want,+got):\n%s", diff)
	}
	type count struct {
		Name, Ancestor  string
		Replicas, Count int32
	}
	var got []count
	for _, ps := range info.PodSets {
		got = append(got, count{ps.Name, ps.Ancestor, ps.Replicas, ps.Count})
	}
	want := []count{
		{"dataset-initializer", "dataset-initializer", 1, 3}, // overridden steps run as one Job
		{"model-initializer", "model-initializer", 1, 1},     // parallelism 0 is clamped to 1
		{"node", "trainer", 1, 4},                            // the trainer uses mlPolicy.numNodes
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodSets (-want,+got):\n%s", diff)
	}
	if spec.Template.Metadata.Labels["tier"] != "runtime" {
		t.Error("NewInfo changed the runtime's labels")
	}
	if diff := cmp.Diff("tj", info.Subdomain); diff != "" {
		t.Errorf("subdomain (-want,+got):\n%s", diff)
	}
}

func TestNewInfoTrainerAndResources(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
	node := &utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0]
	node.Env = []corev1.EnvVar{{Name: "A", Value: "runtime"}, {Name: "B", Value: "runtime"}}
	node.Resources = corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("1"), corev1.ResourceMemory: quantity("1Gi")},
		Limits:   corev1.ResourceList{corev1.ResourceMemory: quantity("2Gi")},
		Claims:   []corev1.ResourceClaim{{Name: "gpu-claim"}},
	}
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(&trainer.Trainer{
		Image:   ptr.To("custom:1"),
		Command: []string{"python"},
		Args:    []string{"train.py"},
		Env:     []corev1.EnvVar{{Name: "B", Value: "job"}, {Name: "C", Value: "job"}},
		ResourcesPerNode: &corev1.ResourceRequirements{
			Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("8")},
			Limits:   corev1.ResourceList{"nvidia.com/gpu": quantity("2")},
			Claims:   []corev1.ResourceClaim{{Name: "gpu-claim", Request: "big"}, {Name: "nic"}},
		},
	}).Obj()

	info, err := NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := info.TrainerContainer()
	want := runtime.Container{
		Name:         "node",
		Image:        "custom:1",
		Command:      []string{"python"},
		Args:         []string{"train.py"},
		Env:          []corev1.EnvVar{{Name: "A", Value: "runtime"}, {Name: "B", Value: "job"}, {Name: "C", Value: "job"}},
		VolumeMounts: []corev1.VolumeMount{{Name: "initializer", MountPath: "/workspace"}},
		Resources: corev1.ResourceRequirements{
			// Merged per resource: the TrainJob's cpu request replaces the runtime's, memory stays.
			Requests: corev1.ResourceList{corev1.ResourceCPU: quantity("8"), corev1.ResourceMemory: quantity("1Gi")},
			Limits:   corev1.ResourceList{corev1.ResourceMemory: quantity("2Gi"), "nvidia.com/gpu": quantity("2")},
			Claims:   []corev1.ResourceClaim{{Name: "gpu-claim", Request: "big"}, {Name: "nic"}},
		},
	}
	if diff := cmp.Diff(want, *c, cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("trainer container (-want,+got):\n%s", diff)
	}
	wantRequests := corev1.ResourceList{corev1.ResourceCPU: quantity("8"), corev1.ResourceMemory: quantity("1Gi"), "nvidia.com/gpu": quantity("2")}
	if diff := cmp.Diff(wantRequests, info.PodSetByName("node").SinglePodRequests); diff != "" {
		t.Errorf("pod requests (-want,+got):\n%s", diff)
	}
	if _, ok := utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Resources.Limits["nvidia.com/gpu"]; ok {
		t.Error("NewInfo changed the runtime's resources")
	}
}

func TestNewInfoInitializers(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Template.Spec.Containers[0].Env = []corev1.EnvVar{{Name: StorageURIEnv, Value: "hf://runtime/default"}}
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").
		DatasetInitializer(&trainer.DatasetInitializer{
			StorageUri: ptr.To("s3://bucket/data"),
			Env:        []corev1.EnvVar{{Name: "ENDPOINT", Value: "http://minio"}},
			SecretRef:  &corev1.LocalObjectReference{Name: "s3-creds"},
		}).
		ModelInitializer(&trainer.ModelInitializer{StorageUri: ptr.To("hf://meta-llama/Llama-3.2-1B")}).Obj()

	info, err := NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	dataset := info.PodSetByAncestor(trainer.AncestorDatasetInitializer).Container("dataset-initializer")
	if diff := cmp.Diff([]corev1.EnvVar{{Name: StorageURIEnv, Value: "s3://bucket/data"}, {Name: "ENDPOINT", Value: "http://minio"}}, dataset.Env); diff != "" {
		t.Errorf("dataset env (-want,+got):\n%s", diff)
	}
	wantEnvFrom := []corev1.EnvFromSource{{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: "s3-creds"}}}}
	if diff := cmp.Diff(wantEnvFrom, dataset.EnvFrom); diff != "" {
		t.Errorf("dataset envFrom (-want,+got):\n%s", diff)
	}
	model := info.PodSetByAncestor(trainer.AncestorModelInitializer).Container("model-initializer")
	if diff := cmp.Diff([]corev1.EnvVar{{Name: StorageURIEnv, Value: "hf://meta-llama/Llama-3.2-1B"}}, model.Env); diff != "" {
		t.Errorf("model env (-want,+got):\n%s", diff)
	}
}

func TestNewInfoMPILauncherAsNode(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{RunLauncherAsNode: ptr.To(true)}).Obj()
	// dataset-initializer plays the MPI node job here: a job named "node" without the trainer label.
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Name = "launcher"
	mpiNode := utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer)
	mpiNode.Name = "node"
	mpiNode.Template.Labels = nil
	mpiNode.Template.Spec.Template.Spec.Containers[0].Name = "node"
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(&trainer.Trainer{
		Image:            ptr.To("launcher:1"),
		Env:              []corev1.EnvVar{{Name: "E", Value: "1"}},
		ResourcesPerNode: &corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": quantity("1")}},
	}).Obj()
	info, err := NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	node := info.PodSetByName("node").Container("node")
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "E", Value: "1"}}, node.Env); diff != "" {
		t.Errorf("node job env (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("dataset-initializer:test", node.Image); diff != "" {
		t.Errorf("the node job keeps its image (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(quantity("1"), node.Resources.Limits["nvidia.com/gpu"]); diff != "" {
		t.Errorf("node job resources (-want,+got):\n%s", diff)
	}
}
