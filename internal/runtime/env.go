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

import corev1 "k8s.io/api/core/v1"

// CompletionIndexEnv returns an env var holding the pod's Job completion index, which is its
// node rank: JobSet runs Indexed Jobs.
func CompletionIndexEnv(name string) corev1.EnvVar {
	return corev1.EnvVar{Name: name, ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{
		FieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
	}}}
}

// ContainerPort is the port every framework's rendezvous (torch master, JAX coordinator, XGBoost
// tracker, torchtune rdzv) listens on.
const ContainerPort int32 = 29500

// SetTrainerCount sets the trainer PodSet's count to the TrainJob's numNodes, when it sets one.
func (i *Info) SetTrainerCount(numNodes *int32) {
	if numNodes == nil {
		return
	}
	if ps := i.PodSetByAncestor(AncestorTrainer); ps != nil {
		ps.Count = *numNodes
	}
}
