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

package torch

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func rankEnv() corev1.EnvVar { return runtime.CompletionIndexEnv(EnvNodeRank) }

func pet(nnodes, nproc, master string) []corev1.EnvVar {
	env := []corev1.EnvVar{{Name: EnvNumNodes, Value: nnodes}, {Name: EnvNumProcPerNode, Value: nproc}, rankEnv()}
	if master != "" {
		env = append(env, corev1.EnvVar{Name: EnvMasterAddr, Value: master}, corev1.EnvVar{Name: EnvMasterPort, Value: "29500"})
	}
	return env
}

func resources(kv ...string) corev1.ResourceRequirements {
	r := corev1.ResourceRequirements{Limits: corev1.ResourceList{}, Requests: corev1.ResourceList{}}
	for i := 0; i < len(kv); i += 3 {
		list := r.Limits
		if kv[i] == "requests" {
			list = r.Requests
		}
		list[corev1.ResourceName(kv[i+1])] = resource.MustParse(kv[i+2])
	}
	return r
}

func enforce(t *testing.T, spec trainer.TrainingRuntimeSpec, tj *trainer.TrainJob) *runtime.Info {
	t.Helper()
	info, err := core.NewInfo(tj, "torch-distributed", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Torch{}).EnforceMLPolicy(info, tj); err != nil {
		t.Fatalf("EnforceMLPolicy() error: %v", err)
	}
	return info
}

func TestEnforceMLPolicy(t *testing.T) {
	torchSpec := func() *utiltesting.TrainingRuntimeSpecWrapper {
		return utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(1).Torch(&trainer.TorchMLPolicySource{})
	}
	gpuRuntime := torchSpec().Obj()
	utiltesting.Job(gpuRuntime.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Resources = resources("limits", "nvidia.com/gpu", "2")
	cases := map[string]struct {
		spec      trainer.TrainingRuntimeSpec
		trainer   *trainer.Trainer
		wantCount int32
		wantEnv   []corev1.EnvVar
		wantPorts []corev1.ContainerPort
	}{
		"no trainer section: nothing injected, runtime count kept": {
			spec:      torchSpec().NumNodes(3).Obj(),
			wantCount: 3,
		},
		"numNodes and numProcPerNode from the TrainJob, user env first": {
			spec: torchSpec().Obj(),
			trainer: utiltesting.MakeTrainerWrapper().NumNodes(100).NumProcPerNode(1).
				Env(corev1.EnvVar{Name: "USER", Value: "x"}).Obj(),
			wantCount: 100,
			wantEnv:   append([]corev1.EnvVar{{Name: "USER", Value: "x"}}, pet("100", "1", "job-node-0-0.job")...),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"CPU-only resourcesPerNode: one process per CPU": {
			spec:      torchSpec().Obj(),
			trainer:   utiltesting.MakeTrainerWrapper().NumNodes(2).ResourcesPerNode(resources("requests", "cpu", "4", "limits", "cpu", "4")).Obj(),
			wantCount: 2,
			wantEnv:   pet("2", "4", "job-node-0-0.job"),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"CPU limits when requests are unset, rounded up": {
			spec:      torchSpec().Obj(),
			trainer:   utiltesting.MakeTrainerWrapper().ResourcesPerNode(resources("limits", "cpu", "2500m")).Obj(),
			wantCount: 1,
			wantEnv:   pet("1", "3", "job-node-0-0.job"),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"GPUs keep auto": {
			spec:      torchSpec().Obj(),
			trainer:   utiltesting.MakeTrainerWrapper().ResourcesPerNode(resources("limits", "nvidia.com/gpu", "8", "requests", "cpu", "32")).Obj(),
			wantCount: 1,
			wantEnv:   pet("1", "auto", "job-node-0-0.job"),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"the runtime's GPUs count when the TrainJob sets no resources": {
			spec:      gpuRuntime,
			trainer:   utiltesting.MakeTrainerWrapper().Obj(),
			wantCount: 1,
			wantEnv:   pet("1", "auto", "job-node-0-0.job"),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"no resources at all: one process": {
			spec:      torchSpec().Obj(),
			trainer:   utiltesting.MakeTrainerWrapper().Obj(),
			wantCount: 1,
			wantEnv:   pet("1", "1", "job-node-0-0.job"),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
		"torchtune gets no master address": {
			spec:      torchSpec().Obj(),
			trainer:   &trainer.Trainer{Command: []string{"tune", "run"}, NumProcPerNode: ptrTo[int32](1)},
			wantCount: 1,
			wantEnv:   pet("1", "1", ""),
			wantPorts: []corev1.ContainerPort{{ContainerPort: 29500}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "job").Trainer(tc.trainer).Obj()
			runtimeName := "torch-distributed"
			if tc.trainer != nil && isTorchtune(tc.trainer) {
				runtimeName = "torchtune-llama3.2-1b"
			}
			info, err := core.NewInfo(tj, runtimeName, &tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := (&Torch{}).EnforceMLPolicy(info, tj); err != nil {
				t.Fatalf("EnforceMLPolicy() error: %v", err)
			}
			ps := info.PodSetByAncestor(trainer.AncestorTrainer)
			if diff := cmp.Diff(tc.wantCount, ps.Count); diff != "" {
				t.Errorf("count (-want,+got):\n%s", diff)
			}
			node := ps.Container(runtime.NodeContainer)
			if diff := cmp.Diff(tc.wantEnv, node.Env); diff != "" {
				t.Errorf("env (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantPorts, node.Ports); diff != "" {
				t.Errorf("ports (-want,+got):\n%s", diff)
			}
		})
	}
}

func ptrTo[T any](v T) *T { return &v }

func TestEnvInjection(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{
		EnvInjection: &trainer.TorchEnvInjection{Targets: []trainer.TorchEnvInjectionTarget{
			{JobName: "model-initializer", ContainerNames: []string{"model-initializer"}},
		}},
	}).Obj()
	spec.Template.Spec.Network = nil
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).NumProcPerNode(4).Obj()).Obj()
	info := enforce(t, spec, tj)
	got := info.PodSetByName("model-initializer").Container("model-initializer").Env
	if diff := cmp.Diff(pet("2", "4", "job-node-0-0.job"), got); diff != "" {
		t.Errorf("injected env (-want,+got):\n%s", diff)
	}
	if got := info.PodSetByName("dataset-initializer").Container("dataset-initializer").Env; len(got) != 0 {
		t.Errorf("a container that is not a target got env %v", got)
	}

	missing := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{
		EnvInjection: &trainer.TorchEnvInjection{Targets: []trainer.TorchEnvInjectionTarget{
			{JobName: "node", ContainerNames: []string{"sidecar"}},
		}},
	}).Obj()
	info, err := core.NewInfo(tj, "torch", &missing, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = (&Torch{}).EnforceMLPolicy(info, tj)
	if diff := cmp.Diff(`envInjection: container "sidecar" not found in replicated job "node"`, errString(err)); diff != "" {
		t.Errorf("error (-want,+got):\n%s", diff)
	}
	_, errs := (&Torch{}).Validate(info, nil, tj)
	if diff := cmp.Diff(`spec.runtimeRef: Invalid value: "torch-distributed": envInjection target container "sidecar" of replicated job "node" does not exist in the runtime`,
		errs.ToAggregate().Error()); diff != "" {
		t.Errorf("validation (-want,+got):\n%s", diff)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
