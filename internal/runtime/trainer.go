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

package runtime

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// The names of the trainer's replicated job and container, and the walk to them, are facts
// about a TrainJob (internal/trainjob); the plugins name them through these.
const (
	NodeContainer   = trainjob.NodeContainer
	NodeJob         = trainjob.NodeJob
	AncestorTrainer = trainer.AncestorTrainer
)

// IsTrainerJob reports whether rj is the trainer step (trainjob.IsTrainerJob).
func IsTrainerJob(rj *jobsetv1alpha2.ReplicatedJob) bool { return trainjob.IsTrainerJob(rj) }

// ReservedEnv returns the indexes of the env vars whose names are reserved.
func ReservedEnv(env []corev1.EnvVar, reserved sets.Set[string]) []int {
	var idx []int
	for i, e := range env {
		if reserved.Has(e.Name) {
			idx = append(idx, i)
		}
	}
	return idx
}

// ReservedEnvInvalid refuses reserved names among the trainer's env as Kubeflow Trainer does for
// torchrun and OpenMPI: one error at spec.trainer.env, naming the reserved names sorted, with
// the whole env as the value.
func ReservedEnvInvalid(t *trainer.Trainer, reserved sets.Set[string]) field.ErrorList {
	if t == nil {
		return nil
	}
	names := sets.New[string]()
	for _, i := range ReservedEnv(t.Env, reserved) {
		names.Insert(t.Env[i].Name)
	}
	if names.Len() == 0 {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "env"), t.Env,
		fmt.Sprintf("must not have reserved envs, invalid envs configured: %v", sets.List(names)))}
}
