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

package testing

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Names used by the default runtime template.
const (
	DatasetInitializer = "dataset-initializer"
	ModelInitializer   = "model-initializer"
	Node               = "node"
	InitializerVolume  = "initializer"
)

// TrainingRuntimeSpecWrapper builds a TrainingRuntimeSpec.
type TrainingRuntimeSpecWrapper struct {
	trainer.TrainingRuntimeSpec
}

// MakeTrainingRuntimeSpecWrapper returns a spec without an ML policy whose template has three
// replicated jobs, in this order: dataset-initializer, model-initializer and node. Each carries
// its ancestor label, a container of the same name and the "initializer" volume (a PVC) mounted
// at /workspace.
func MakeTrainingRuntimeSpecWrapper() *TrainingRuntimeSpecWrapper {
	return &TrainingRuntimeSpecWrapper{trainer.TrainingRuntimeSpec{
		Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{
			ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
				replicatedJob(DatasetInitializer, trainer.AncestorDatasetInitializer, DatasetInitializer),
				replicatedJob(ModelInitializer, trainer.AncestorModelInitializer, ModelInitializer),
				replicatedJob(Node, trainer.AncestorTrainer, Node),
			},
		}},
	}}
}

func replicatedJob(name, ancestor, container string) jobsetv1alpha2.ReplicatedJob {
	return jobsetv1alpha2.ReplicatedJob{
		Name:     name,
		Replicas: 1,
		Template: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: ancestor}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers: []corev1.Container{{
					Name:         container,
					Image:        container + ":test",
					VolumeMounts: []corev1.VolumeMount{{Name: InitializerVolume, MountPath: "/workspace"}},
				}},
				Volumes: []corev1.Volume{{
					Name: InitializerVolume,
					VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{
						ClaimName: InitializerVolume,
					}},
				}},
			}}},
		},
	}
}

// Obj returns the built spec.
func (w *TrainingRuntimeSpecWrapper) Obj() trainer.TrainingRuntimeSpec {
	return w.TrainingRuntimeSpec
}

func (w *TrainingRuntimeSpecWrapper) mlPolicy() *trainer.MLPolicy {
	if w.MLPolicy == nil {
		w.MLPolicy = &trainer.MLPolicy{}
	}
	return w.MLPolicy
}

// NumNodes sets mlPolicy.numNodes.
func (w *TrainingRuntimeSpecWrapper) NumNodes(n int32) *TrainingRuntimeSpecWrapper {
	w.mlPolicy().NumNodes = ptr.To(n)
	return w
}

// Torch sets mlPolicy.torch.
func (w *TrainingRuntimeSpecWrapper) Torch(torch *trainer.TorchMLPolicySource) *TrainingRuntimeSpecWrapper {
	w.mlPolicy().Torch = torch
	return w
}

// MPI sets mlPolicy.mpi.
func (w *TrainingRuntimeSpecWrapper) MPI(mpi *trainer.MPIMLPolicySource) *TrainingRuntimeSpecWrapper {
	w.mlPolicy().MPI = mpi
	return w
}

// JAX sets mlPolicy.jax.
func (w *TrainingRuntimeSpecWrapper) JAX() *TrainingRuntimeSpecWrapper {
	w.mlPolicy().JAX = &trainer.JAXMLPolicySource{}
	return w
}

// XGBoost sets mlPolicy.xgboost.
func (w *TrainingRuntimeSpecWrapper) XGBoost() *TrainingRuntimeSpecWrapper {
	w.mlPolicy().XGBoost = &trainer.XGBoostMLPolicySource{}
	return w
}

// Flux sets mlPolicy.flux.
func (w *TrainingRuntimeSpecWrapper) Flux(flux *trainer.FluxMLPolicySource) *TrainingRuntimeSpecWrapper {
	w.mlPolicy().Flux = flux
	return w
}

// Coscheduling sets podGroupPolicy.coscheduling.
func (w *TrainingRuntimeSpecWrapper) Coscheduling(c *trainer.CoschedulingPodGroupPolicySource) *TrainingRuntimeSpecWrapper {
	if w.PodGroupPolicy == nil {
		w.PodGroupPolicy = &trainer.PodGroupPolicy{}
	}
	w.PodGroupPolicy.Coscheduling = c
	return w
}

// TrainingRuntimeWrapper builds a TrainingRuntime.
type TrainingRuntimeWrapper struct {
	trainer.TrainingRuntime
}

// MakeTrainingRuntimeWrapper returns a TrainingRuntime with the default spec of
// MakeTrainingRuntimeSpecWrapper.
func MakeTrainingRuntimeWrapper(ns, name string) *TrainingRuntimeWrapper {
	return &TrainingRuntimeWrapper{trainer.TrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       MakeTrainingRuntimeSpecWrapper().Obj(),
	}}
}

// Spec replaces the spec.
func (w *TrainingRuntimeWrapper) Spec(spec trainer.TrainingRuntimeSpec) *TrainingRuntimeWrapper {
	w.TrainingRuntime.Spec = spec
	return w
}

// Label sets a label.
func (w *TrainingRuntimeWrapper) Label(key, value string) *TrainingRuntimeWrapper {
	w.Labels = setLabel(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *TrainingRuntimeWrapper) Annotation(key, value string) *TrainingRuntimeWrapper {
	w.Annotations = setLabel(w.Annotations, key, value)
	return w
}

// Obj returns the built TrainingRuntime.
func (w *TrainingRuntimeWrapper) Obj() *trainer.TrainingRuntime {
	return &w.TrainingRuntime
}

// ClusterTrainingRuntimeWrapper builds a ClusterTrainingRuntime.
type ClusterTrainingRuntimeWrapper struct {
	trainer.ClusterTrainingRuntime
}

// MakeClusterTrainingRuntimeWrapper returns a ClusterTrainingRuntime with the default spec of
// MakeTrainingRuntimeSpecWrapper.
func MakeClusterTrainingRuntimeWrapper(name string) *ClusterTrainingRuntimeWrapper {
	return &ClusterTrainingRuntimeWrapper{trainer.ClusterTrainingRuntime{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.ClusterTrainingRuntimeKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       MakeTrainingRuntimeSpecWrapper().Obj(),
	}}
}

// Spec replaces the spec.
func (w *ClusterTrainingRuntimeWrapper) Spec(spec trainer.TrainingRuntimeSpec) *ClusterTrainingRuntimeWrapper {
	w.ClusterTrainingRuntime.Spec = spec
	return w
}

// Label sets a label.
func (w *ClusterTrainingRuntimeWrapper) Label(key, value string) *ClusterTrainingRuntimeWrapper {
	w.Labels = setLabel(w.Labels, key, value)
	return w
}

// Annotation sets an annotation.
func (w *ClusterTrainingRuntimeWrapper) Annotation(key, value string) *ClusterTrainingRuntimeWrapper {
	w.Annotations = setLabel(w.Annotations, key, value)
	return w
}

// Obj returns the built ClusterTrainingRuntime.
func (w *ClusterTrainingRuntimeWrapper) Obj() *trainer.ClusterTrainingRuntime {
	return &w.ClusterTrainingRuntime
}

func setLabel(labels map[string]string, key, value string) map[string]string {
	if labels == nil {
		labels = map[string]string{}
	}
	labels[key] = value
	return labels
}

// Job returns the replicated job called name, from a runtime template or a JobSet, so a test
// says which job it means instead of relying on the template's order. A missing job is a bug in
// the test: it panics.
func Job(jobs []jobsetv1alpha2.ReplicatedJob, name string) *jobsetv1alpha2.ReplicatedJob {
	for i := range jobs {
		if jobs[i].Name == name {
			return &jobs[i]
		}
	}
	panic("no replicated job named " + name)
}
