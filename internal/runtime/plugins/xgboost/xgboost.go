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

// Package xgboost sets up XGBoost's collective: the tracker on the first node and the worker
// count and rank of every pod.
package xgboost

import (
	"fmt"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "XGBoost"

// XGBoost collective environment.
const (
	EnvTrackerURI  = "DMLC_TRACKER_URI"
	EnvTrackerPort = "DMLC_TRACKER_PORT"
	EnvTaskID      = "DMLC_TASK_ID"
	EnvNumWorker   = "DMLC_NUM_WORKER"
)

var reservedEnv = sets.New(EnvTrackerURI, EnvTrackerPort, EnvTaskID, EnvNumWorker)

// XGBoost is the XGBoost ML policy.
type XGBoost struct{}

var (
	_ framework.EnforceMLPolicyPlugin  = (*XGBoost)(nil)
	_ framework.CustomValidationPlugin = (*XGBoost)(nil)
)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &XGBoost{}, nil
}

// Name returns the plugin name.
func (*XGBoost) Name() string { return Name }

// MLPolicyKind is XGBoost.
func (*XGBoost) MLPolicyKind() runtime.MLPolicyKind { return runtime.XGBoost }

// EnforceMLPolicy sizes the trainer and, when the TrainJob has a trainer section, gives its node
// container the tracker address and worker count: one worker per GPU, or one per CPU-only node.
func (*XGBoost) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	t := tj.Spec.Trainer
	if t == nil {
		return nil
	}
	info.SetTrainerCount(t.NumNodes)
	ps, node, err := info.TrainerNode()
	if err != nil {
		return err
	}
	workers := int64(1)
	res := node.Resources
	if t.ResourcesPerNode != nil {
		res = *t.ResourcesPerNode
	}
	if gpus := runtime.NumGPU(res); gpus > 0 {
		workers = gpus
	}
	node.Env = runtime.UpsertEnv(node.Env,
		corev1.EnvVar{Name: EnvTrackerURI, Value: info.Endpoint(tj.Name, ps.Name, 0, 0)},
		corev1.EnvVar{Name: EnvTrackerPort, Value: strconv.Itoa(int(runtime.ContainerPort))},
		runtime.CompletionIndexEnv(EnvTaskID),
		corev1.EnvVar{Name: EnvNumWorker, Value: strconv.FormatInt(int64(ps.Count)*workers, 10)},
	)
	node.Ports = runtime.UpsertPorts(node.Ports, corev1.ContainerPort{ContainerPort: runtime.ContainerPort})
	return nil
}

// Validate refuses the DMLC_* names the plugin owns.
func (*XGBoost) Validate(info *runtime.Info, _, tj *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	if tj.Spec.Trainer == nil {
		return nil, nil
	}
	var errs field.ErrorList
	env := tj.Spec.Trainer.Env
	for _, i := range runtime.ReservedEnv(env, reservedEnv) {
		errs = append(errs, field.Forbidden(field.NewPath("spec", "trainer", "env").Index(i),
			fmt.Sprintf("%s is reserved for the XGBoost runtime", env[i].Name)))
	}
	return nil, errs
}
