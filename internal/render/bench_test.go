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

package render

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// benchmarkRender measures what the controller does per TrainJob: build every object and convert
// it for server-side apply. With firstBuild it also completes the create-once objects (the
// runtime snapshot), as the first reconcile does; MPI key generation is left out either way.
func benchmarkRender(b *testing.B, tj *trainer.TrainJob, rt client.Object, firstBuild bool) {
	r, err := NewRuntime()
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		build, err := r.NewObjects(ctx, tj, rt, Observed(PlaceholderCA))
		if err != nil {
			b.Fatal(err)
		}
		for _, o := range build.Objects {
			if firstBuild && o.Complete != nil && o.GetObjectKind().GroupVersionKind().Kind != "Secret" {
				if err := o.Complete(); err != nil {
					b.Fatal(err)
				}
			}
			if _, err := apply.ToUnstructured(o.Object); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkRenderTorch100Nodes(b *testing.B) {
	tj, rt := torch100()
	benchmarkRender(b, tj, rt, false)
}

func BenchmarkRenderTorch100NodesFirstBuild(b *testing.B) {
	tj, rt := torch100()
	benchmarkRender(b, tj, rt, true)
}

func torch100() (*trainer.TrainJob, client.Object) {
	rt := utiltesting.MakeClusterTrainingRuntimeWrapper("torch-distributed").
		Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(1).Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	tj := utiltesting.MakeTrainJobWrapper("default", "torch").Trainer(utiltesting.MakeTrainerWrapper().
		Container("pytorch:2", []string{"torchrun", "train.py"}, nil).NumNodes(100).
		ResourcesPerNode(corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": resource.MustParse("8")}}).
		Env(corev1.EnvVar{Name: "EPOCHS", Value: "10"}).Obj()).Obj()
	tj.UID = "uid"
	return tj, rt
}

func BenchmarkRenderMPI1000Nodes(b *testing.B) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{
		NumProcPerNode: ptr.To[int32](8), RunLauncherAsNode: ptr.To(true), SSHAuthMountPath: ptr.To("/home/mpiuser/.ssh"),
	}).Obj()
	// launcher (the trainer) and node, as the deepspeed runtime has them.
	jobs := spec.Template.Spec.ReplicatedJobs
	node := *jobs[2].DeepCopy()
	node.Name = "node"
	node.Template.Labels = nil
	launcher := jobs[2]
	launcher.Name = "launcher"
	spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{node, launcher}
	rt := utiltesting.MakeClusterTrainingRuntimeWrapper("deepspeed-distributed").Spec(spec).Obj()
	tj := utiltesting.MakeTrainJobWrapper("default", "mpi").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(1000).Obj()).Obj()
	tj.UID = "uid"
	info, err := mustRuntime(b).RuntimeInfo(tj, rt, nil)
	if err != nil {
		b.Fatal(err)
	}
	if got := info.PodSetByName("node").Count; got != 999 {
		b.Fatalf("node count %d, want 999", got)
	}
	benchmarkRender(b, tj, rt, false)
}

func mustRuntime(b *testing.B) *core.Runtime {
	r, err := NewRuntime()
	if err != nil {
		b.Fatal(err)
	}
	return r
}
