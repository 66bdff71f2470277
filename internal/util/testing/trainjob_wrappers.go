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

// Package testing holds builders for test objects. Every wrapper embeds the real API type and
// ends with Obj(), so tests state only what matters to them.
package testing

import (
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TrainJobWrapper builds a TrainJob.
type TrainJobWrapper struct {
	trainer.TrainJob
}

// MakeTrainJobWrapper returns a TrainJob in namespace ns that references the ClusterTrainingRuntime
// "torch-distributed" and sets nothing else.
func MakeTrainJobWrapper(ns, name string) *TrainJobWrapper {
	return &TrainJobWrapper{trainer.TrainJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"}},
	}}
}

// Obj returns the built TrainJob.
func (w *TrainJobWrapper) Obj() *trainer.TrainJob {
	return &w.TrainJob
}

// RuntimeRef points the TrainJob at the runtime of the given kind and name.
func (w *TrainJobWrapper) RuntimeRef(kind, name string) *TrainJobWrapper {
	w.Spec.RuntimeRef = trainer.RuntimeRef{
		APIGroup: ptr.To(trainer.GroupVersion.Group),
		Kind:     ptr.To(kind),
		Name:     name,
	}
	return w
}

// Label sets a label on the TrainJob.
func (w *TrainJobWrapper) Label(key, value string) *TrainJobWrapper {
	w.Labels = setLabel(w.Labels, key, value)
	return w
}

// Annotation sets an annotation on the TrainJob.
func (w *TrainJobWrapper) Annotation(key, value string) *TrainJobWrapper {
	w.Annotations = setLabel(w.Annotations, key, value)
	return w
}

// Suspend sets spec.suspend.
func (w *TrainJobWrapper) Suspend(suspend bool) *TrainJobWrapper {
	w.Spec.Suspend = ptr.To(suspend)
	return w
}

// ManagedBy sets spec.managedBy.
func (w *TrainJobWrapper) ManagedBy(managedBy string) *TrainJobWrapper {
	w.Spec.ManagedBy = ptr.To(managedBy)
	return w
}

// ActiveDeadlineSeconds sets spec.activeDeadlineSeconds.
func (w *TrainJobWrapper) ActiveDeadlineSeconds(seconds int64) *TrainJobWrapper {
	w.Spec.ActiveDeadlineSeconds = ptr.To(seconds)
	return w
}

// Trainer sets spec.trainer.
func (w *TrainJobWrapper) Trainer(t *trainer.Trainer) *TrainJobWrapper {
	w.Spec.Trainer = t
	return w
}

// DatasetInitializer sets spec.initializer.dataset.
func (w *TrainJobWrapper) DatasetInitializer(d *trainer.DatasetInitializer) *TrainJobWrapper {
	if w.Spec.Initializer == nil {
		w.Spec.Initializer = &trainer.Initializer{}
	}
	w.Spec.Initializer.Dataset = d
	return w
}

// ModelInitializer sets spec.initializer.model.
func (w *TrainJobWrapper) ModelInitializer(m *trainer.ModelInitializer) *TrainJobWrapper {
	if w.Spec.Initializer == nil {
		w.Spec.Initializer = &trainer.Initializer{}
	}
	w.Spec.Initializer.Model = m
	return w
}

// RuntimePatches appends runtime patches.
func (w *TrainJobWrapper) RuntimePatches(patches ...trainer.RuntimePatch) *TrainJobWrapper {
	w.Spec.RuntimePatches = append(w.Spec.RuntimePatches, patches...)
	return w
}

// Created sets metadata.creationTimestamp, which the API server would.
func (w *TrainJobWrapper) Created(t time.Time) *TrainJobWrapper {
	w.CreationTimestamp = metav1.NewTime(t)
	return w
}

// Condition sets a status condition, as the controller would.
func (w *TrainJobWrapper) Condition(c metav1.Condition) *TrainJobWrapper {
	meta.SetStatusCondition(&w.Status.Conditions, c)
	return w
}

// JobsStatus appends entries of status.jobsStatus, as the controller would.
func (w *TrainJobWrapper) JobsStatus(s ...trainer.JobStatus) *TrainJobWrapper {
	w.Status.JobsStatus = append(w.Status.JobsStatus, s...)
	return w
}

// TrainerStatus sets status.trainerStatus, the progress the training reports.
func (w *TrainJobWrapper) TrainerStatus(s *trainer.TrainJobTrainerStatus) *TrainJobWrapper {
	w.Status.TrainerStatus = s
	return w
}

// TrainerWrapper builds a TrainJob's spec.trainer.
type TrainerWrapper struct {
	trainer.Trainer
}

// MakeTrainerWrapper returns an empty spec.trainer.
func MakeTrainerWrapper() *TrainerWrapper {
	return &TrainerWrapper{}
}

// Obj returns the built Trainer.
func (w *TrainerWrapper) Obj() *trainer.Trainer {
	return &w.Trainer
}

// Container sets the image, command and args.
func (w *TrainerWrapper) Container(image string, command, args []string) *TrainerWrapper {
	w.Image = ptr.To(image)
	w.Command = command
	w.Args = args
	return w
}

// NumNodes sets numNodes.
func (w *TrainerWrapper) NumNodes(n int32) *TrainerWrapper {
	w.Trainer.NumNodes = ptr.To(n)
	return w
}

// NumProcPerNode sets numProcPerNode.
func (w *TrainerWrapper) NumProcPerNode(n int32) *TrainerWrapper {
	w.Trainer.NumProcPerNode = ptr.To(n)
	return w
}

// Env appends environment variables.
func (w *TrainerWrapper) Env(env ...corev1.EnvVar) *TrainerWrapper {
	w.Trainer.Env = append(w.Trainer.Env, env...)
	return w
}

// ResourcesPerNode sets resourcesPerNode.
func (w *TrainerWrapper) ResourcesPerNode(r corev1.ResourceRequirements) *TrainerWrapper {
	w.Trainer.ResourcesPerNode = &r
	return w
}

// RuntimePatchWrapper builds one runtime patch for a manager.
type RuntimePatchWrapper struct {
	trainer.RuntimePatch
}

// MakeRuntimePatchWrapper returns an empty patch owned by manager.
func MakeRuntimePatchWrapper(manager string) *RuntimePatchWrapper {
	return &RuntimePatchWrapper{trainer.RuntimePatch{Manager: manager}}
}

// Obj returns the built patch.
func (w *RuntimePatchWrapper) Obj() trainer.RuntimePatch {
	return w.RuntimePatch
}

// JobSetLabel sets a label on the JobSet template metadata.
func (w *RuntimePatchWrapper) JobSetLabel(key, value string) *RuntimePatchWrapper {
	t := w.template()
	if t.Metadata == nil {
		t.Metadata = &metav1.ObjectMeta{}
	}
	if t.Metadata.Labels == nil {
		t.Metadata.Labels = map[string]string{}
	}
	t.Metadata.Labels[key] = value
	return w
}

// PodSpec sets the pod spec patch of replicated job job.
func (w *RuntimePatchWrapper) PodSpec(job string, spec trainer.PodSpecPatch) *RuntimePatchWrapper {
	t := w.template()
	if t.Spec == nil {
		t.Spec = &trainer.JobSetSpecPatch{}
	}
	t.Spec.ReplicatedJobs = append(t.Spec.ReplicatedJobs, trainer.ReplicatedJobPatch{
		Name: job,
		Template: &trainer.JobTemplatePatch{Spec: &trainer.JobSpecPatch{
			Template: &trainer.PodTemplatePatch{Spec: &spec},
		}},
	})
	return w
}

func (w *RuntimePatchWrapper) template() *trainer.JobSetTemplatePatch {
	if w.TrainingRuntimeSpec == nil {
		w.TrainingRuntimeSpec = &trainer.TrainingRuntimeSpecPatch{}
	}
	if w.TrainingRuntimeSpec.Template == nil {
		w.TrainingRuntimeSpec.Template = &trainer.JobSetTemplatePatch{}
	}
	return w.TrainingRuntimeSpec.Template
}
