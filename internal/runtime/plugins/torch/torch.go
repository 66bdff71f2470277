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

// Package torch injects the torchrun environment (PET_*) into the trainer, sizes the job from
// numNodes and numProcPerNode, and rewrites torchtune commands.
package torch

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Name of the plugin.
const Name = "Torch"

// torchrun environment.
const (
	EnvNumNodes       = "PET_NNODES"
	EnvNumProcPerNode = "PET_NPROC_PER_NODE"
	EnvNodeRank       = "PET_NODE_RANK"
	EnvMasterAddr     = "PET_MASTER_ADDR"
	EnvMasterPort     = "PET_MASTER_PORT"

	// Elastic torch (elastic.gantry.dev annotations): torchrun's c10d rendezvous.
	EnvRdzvBackend  = "PET_RDZV_BACKEND"
	EnvRdzvEndpoint = "PET_RDZV_ENDPOINT"
	EnvRdzvID       = "PET_RDZV_ID"
	EnvMaxRestarts  = "PET_MAX_RESTARTS"
	// RdzvPort is where node 0 serves the c10d rendezvous.
	RdzvPort = 29400
)

// reservedEnv are the names the plugin owns; a TrainJob may not set them.
var reservedEnv = sets.New(EnvNumNodes, EnvNumProcPerNode, EnvNodeRank, EnvMasterAddr, EnvMasterPort)

// reservedElasticEnv are also the plugin's when the TrainJob is elastic.
var reservedElasticEnv = sets.New(EnvRdzvBackend, EnvRdzvEndpoint, EnvRdzvID, EnvMaxRestarts)

// Torch is the PyTorch ML policy.
type Torch struct{}

var (
	_ framework.EnforceMLPolicyPlugin  = (*Torch)(nil)
	_ framework.CustomValidationPlugin = (*Torch)(nil)
)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &Torch{}, nil
}

// Name returns the plugin name.
func (*Torch) Name() string { return Name }

// MLPolicyKind is Torch.
func (*Torch) MLPolicyKind() runtime.MLPolicyKind { return runtime.Torch }

// EnforceMLPolicy sizes the trainer and, when the TrainJob has a trainer section, injects the PET_*
// environment and port 29500 into its node container and into the envInjection targets.
func (*Torch) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	t := tj.Spec.Trainer
	if t == nil {
		return nil
	}
	elastic, errs := knobs.ParseElastic(info.Knobs)
	if len(errs) > 0 {
		return errs.ToAggregate()
	}
	// An elastic TrainJob is built at numNodes too: target-nodes reaches only a running JobSet
	// (the controller's scale), never a build, so a suspend (Kueue's preemption) writes nothing
	// JobSet would refuse and a queued TrainJob runs at the size Kueue admitted.
	info.SetTrainerCount(t.NumNodes)
	ps, node, err := info.TrainerNode()
	if err != nil {
		return err
	}
	nproc := numProcPerNode(info, t)
	tune := isTorchtune(t)
	env := append(petEnv(info, tj, ps, nproc, !tune), elasticEnv(info, tj, ps, elastic)...)
	node.Env = runtime.UpsertEnv(node.Env, env...)
	node.Ports = runtime.UpsertPorts(node.Ports, corev1.ContainerPort{ContainerPort: runtime.ContainerPort})
	if elastic != nil {
		node.Ports = runtime.UpsertPorts(node.Ports, corev1.ContainerPort{ContainerPort: RdzvPort})
	}
	if tune {
		if err := mutateTorchtuneCommand(info, tj, node, ps.Count, nproc); err != nil {
			return err
		}
	}
	return injectTargets(info, append(petEnv(info, tj, ps, nproc, true), elasticEnv(info, tj, ps, elastic)...))
}

// elasticEnv turns torchrun elastic: a node range instead of a count, and a c10d rendezvous on
// node 0 that nodes join and leave. The master address stays, for scripts that read it.
func elasticEnv(info *runtime.Info, tj *trainer.TrainJob, ps *runtime.PodSet, e *knobs.Elastic) []corev1.EnvVar {
	if e == nil {
		return nil
	}
	id := string(tj.UID)
	if id == "" {
		id = tj.Name // an offline render has no UID yet
	}
	return []corev1.EnvVar{
		{Name: EnvNumNodes, Value: fmt.Sprintf("%d:%d", e.MinNodes, e.MaxNodes)},
		{Name: EnvRdzvBackend, Value: "c10d"},
		{Name: EnvRdzvEndpoint, Value: fmt.Sprintf("%s:%d", info.Endpoint(tj.Name, ps.Name, 0, 0), RdzvPort)},
		{Name: EnvRdzvID, Value: id},
		{Name: EnvMaxRestarts, Value: strconv.Itoa(int(e.MaxRestarts))},
	}
}

// petEnv is the torchrun environment; the master address is the first pod of the trainer job.
func petEnv(info *runtime.Info, tj *trainer.TrainJob, ps *runtime.PodSet, nproc string, withMaster bool) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: EnvNumNodes, Value: strconv.Itoa(int(ps.Count))},
		{Name: EnvNumProcPerNode, Value: nproc},
		runtime.CompletionIndexEnv(EnvNodeRank),
	}
	if withMaster {
		env = append(env,
			corev1.EnvVar{Name: EnvMasterAddr, Value: info.Endpoint(tj.Name, ps.Name, 0, 0)},
			corev1.EnvVar{Name: EnvMasterPort, Value: strconv.Itoa(int(runtime.ContainerPort))},
		)
	}
	return env
}

// injectTargets gives every envInjection target container the full torchrun environment.
func injectTargets(info *runtime.Info, env []corev1.EnvVar) error {
	torch := info.RuntimePolicy.MLPolicy.Torch
	if torch.EnvInjection == nil {
		return nil
	}
	for _, target := range torch.EnvInjection.Targets {
		ps := info.PodSetByName(target.JobName)
		if ps == nil {
			return fmt.Errorf("envInjection: replicated job %q not found", target.JobName)
		}
		for _, name := range target.ContainerNames {
			c := ps.Container(name)
			if c == nil {
				return fmt.Errorf("envInjection: container %q not found in replicated job %q", name, target.JobName)
			}
			c.Env = runtime.UpsertEnv(c.Env, env...)
		}
	}
	return nil
}

// numProcPerNode is the TrainJob's value when set. Otherwise "auto", which on a node without GPUs
// becomes the CPU count (torchrun's auto would start one process per CPU core it sees, not per
// core the pod may use).
func numProcPerNode(info *runtime.Info, t *trainer.Trainer) string {
	if t.NumProcPerNode != nil {
		return strconv.Itoa(int(*t.NumProcPerNode))
	}
	res := runtimeNodeResources(info)
	if t.ResourcesPerNode != nil {
		res = *t.ResourcesPerNode
	}
	if runtime.NumGPU(res) > 0 {
		return "auto"
	}
	cpu := res.Requests[corev1.ResourceCPU]
	if cpu.IsZero() {
		cpu = res.Limits[corev1.ResourceCPU]
	}
	return strconv.FormatInt(max(cpu.Value(), 1), 10)
}

// runtimeNodeResources are the resources of the runtime's trainer node container as written.
func runtimeNodeResources(info *runtime.Info) corev1.ResourceRequirements {
	if _, c := trainjob.TrainerNode(&info.RuntimeSpec.Template.Spec); c != nil {
		return c.Resources
	}
	return corev1.ResourceRequirements{}
}

// Validate refuses reserved env names and envInjection targets the runtime lacks.
func (*Torch) Validate(info *runtime.Info, _, tj *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	reserved := reservedEnv
	if elastic, _ := knobs.ParseElastic(info.Knobs); elastic != nil {
		reserved = reservedEnv.Union(reservedElasticEnv)
	}
	errs := runtime.ReservedEnvInvalid(tj.Spec.Trainer, reserved)
	if inj := info.RuntimePolicy.MLPolicy.Torch.EnvInjection; inj != nil {
		for _, target := range inj.Targets {
			ps := info.PodSetByName(target.JobName)
			for _, name := range target.ContainerNames {
				if ps == nil || ps.Container(name) == nil {
					errs = append(errs, field.Invalid(field.NewPath("spec", "runtimeRef"), tj.Spec.RuntimeRef.Name,
						fmt.Sprintf("envInjection target container %q of replicated job %q does not exist in the runtime", name, target.JobName)))
				}
			}
		}
	}
	errs = append(errs, validateTorchtune(info, tj)...)
	return nil, errs
}
