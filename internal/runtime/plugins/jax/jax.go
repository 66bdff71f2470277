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

// Package jax sets up JAX multi-process training: process count, process id and the
// coordinator address of every node.
package jax

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "JAX"

// JAX distributed environment.
const (
	EnvNumProcesses       = "JAX_NUM_PROCESSES"
	EnvProcessID          = "JAX_PROCESS_ID"
	EnvCoordinatorAddress = "JAX_COORDINATOR_ADDRESS"
)

// JAX is the JAX ML policy.
type JAX struct{}

var _ framework.EnforceMLPolicyPlugin = (*JAX)(nil)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &JAX{}, nil
}

// Name returns the plugin name.
func (*JAX) Name() string { return Name }

// MLPolicyKind is JAX.
func (*JAX) MLPolicyKind() runtime.MLPolicyKind { return runtime.JAX }

// EnforceMLPolicy sizes the trainer and, when the TrainJob has a trainer section, gives its node
// container the JAX environment and port 29500.
func (*JAX) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	t := tj.Spec.Trainer
	if t == nil {
		return nil
	}
	info.SetTrainerCount(t.NumNodes)
	ps, node, err := info.TrainerNode()
	if err != nil {
		return err
	}
	node.Env = runtime.UpsertEnv(node.Env,
		corev1.EnvVar{Name: EnvNumProcesses, Value: strconv.Itoa(int(ps.Count))},
		runtime.CompletionIndexEnv(EnvProcessID),
		corev1.EnvVar{Name: EnvCoordinatorAddress, Value: fmt.Sprintf("%s:%d", info.Endpoint(tj.Name, ps.Name, 0, 0), runtime.ContainerPort)},
	)
	node.Ports = runtime.UpsertPorts(node.Ports, corev1.ContainerPort{ContainerPort: runtime.ContainerPort})
	return nil
}
