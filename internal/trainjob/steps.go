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

package trainjob

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// The replicated jobs of a TrainJob's JobSet, as Kubeflow Trainer's runtimes name them and the
// Python SDK's steps and Kueue's PodSets rely on. Initializers run before training: a job whose
// only active pods are theirs is still getting ready, not training.
const (
	DatasetInitializer = trainer.AncestorDatasetInitializer
	ModelInitializer   = trainer.AncestorModelInitializer
	// NodeJob is the replicated job of the nodes: the trainer job of most runtimes, the workers
	// of an MPI runtime.
	NodeJob = "node"
	// LauncherJob is an MPI runtime's launcher.
	LauncherJob = "launcher"
	// NodeContainer is the training container in every trainer job. It happens to equal
	// NodeJob; the two are different things.
	NodeContainer = "node"
)

// IsTrainerJob reports whether rj is the trainer step: the replicated job labelled as the
// trainer ancestor, whose node container a TrainJob's trainer section overrides.
func IsTrainerJob(rj *jobsetv1alpha2.ReplicatedJob) bool {
	return rj.Template.Labels[trainer.AncestorLabel] == trainer.AncestorTrainer
}

// TrainerNode finds, in a JobSet spec as written (a runtime's template), the trainer job and its
// node container: the one walk to them over templates. Both are nil when absent.
func TrainerNode(spec *jobsetv1alpha2.JobSetSpec) (*jobsetv1alpha2.ReplicatedJob, *corev1.Container) {
	i := slices.IndexFunc(spec.ReplicatedJobs, func(rj jobsetv1alpha2.ReplicatedJob) bool { return IsTrainerJob(&rj) })
	if i < 0 {
		return nil, nil
	}
	rj := &spec.ReplicatedJobs[i]
	cs := rj.Template.Spec.Template.Spec.Containers
	if k := slices.IndexFunc(cs, func(c corev1.Container) bool { return c.Name == NodeContainer }); k >= 0 {
		return rj, &cs[k]
	}
	return rj, nil
}
