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
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// OptimizationJobWrapper builds an OptimizationJob.
type OptimizationJobWrapper struct {
	trainer.OptimizationJob
}

// MakeOptimizationJobWrapper returns an OptimizationJob in namespace ns with the schema's
// defaults written out (one trial at a time, one in all, random search), minimising "loss", and a
// template that references the ClusterTrainingRuntime "torch-distributed"; it has no parameters.
func MakeOptimizationJobWrapper(ns, name string) *OptimizationJobWrapper {
	return &OptimizationJobWrapper{trainer.OptimizationJob{
		TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.OptimizationJobKind},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.OptimizationJobSpec{
			Objectives:       []trainer.Objective{{Metric: "loss", Direction: trainer.ObjectiveDirectionMinimize}},
			SearchAlgorithm:  &trainer.SearchAlgorithm{Random: &trainer.RandomAlgorithm{}},
			NumTrials:        1,
			ParallelTrials:   1,
			TrainJobTemplate: trainer.TrainJobTemplateSpec{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"}}},
		},
	}}
}

// Obj returns the built OptimizationJob.
func (w *OptimizationJobWrapper) Obj() *trainer.OptimizationJob {
	return &w.OptimizationJob
}

// Trials sets numTrials and parallelTrials.
func (w *OptimizationJobWrapper) Trials(num, parallel int32) *OptimizationJobWrapper {
	w.Spec.NumTrials, w.Spec.ParallelTrials = num, parallel
	return w
}

// Objective sets the one objective.
func (w *OptimizationJobWrapper) Objective(metric string, direction trainer.ObjectiveDirection) *OptimizationJobWrapper {
	w.Spec.Objectives = []trainer.Objective{{Metric: metric, Direction: direction}}
	return w
}

// Seed makes the search random with the given seed.
func (w *OptimizationJobWrapper) Seed(seed int64) *OptimizationJobWrapper {
	w.Spec.SearchAlgorithm = &trainer.SearchAlgorithm{Random: &trainer.RandomAlgorithm{Seed: ptr.To(seed)}}
	return w
}

// Grid makes the search a grid search.
func (w *OptimizationJobWrapper) Grid() *OptimizationJobWrapper {
	w.Spec.SearchAlgorithm = &trainer.SearchAlgorithm{Grid: &trainer.GridAlgorithm{}}
	return w
}

// Categorical adds a categorical parameter.
func (w *OptimizationJobWrapper) Categorical(name string, choices ...string) *OptimizationJobWrapper {
	return w.parameter(name, trainer.SearchSpace{Categorical: &trainer.CategoricalSpace{Choices: choices}})
}

// Uniform adds a uniform parameter.
func (w *OptimizationJobWrapper) Uniform(name, lo, hi string, typ trainer.ParameterType) *OptimizationJobWrapper {
	return w.parameter(name, trainer.SearchSpace{Uniform: &trainer.UniformSpace{Min: lo, Max: hi, Type: typ}})
}

// LogUniform adds a log-uniform parameter.
func (w *OptimizationJobWrapper) LogUniform(name, lo, hi string, typ trainer.ParameterType) *OptimizationJobWrapper {
	return w.parameter(name, trainer.SearchSpace{LogUniform: &trainer.LogUniformSpace{Min: lo, Max: hi, Type: typ}})
}

func (w *OptimizationJobWrapper) parameter(name string, s trainer.SearchSpace) *OptimizationJobWrapper {
	w.Spec.Parameters = append(w.Spec.Parameters, trainer.Parameter{Name: name, SearchSpace: &s})
	return w
}

// Trainer sets the template's trainer.
func (w *OptimizationJobWrapper) Trainer(t *trainer.Trainer) *OptimizationJobWrapper {
	w.Spec.TrainJobTemplate.Spec.Trainer = t
	return w
}

// TemplateLabel sets a label of the template's metadata.
func (w *OptimizationJobWrapper) TemplateLabel(key, value string) *OptimizationJobWrapper {
	if w.Spec.TrainJobTemplate.Labels == nil {
		w.Spec.TrainJobTemplate.Labels = map[string]string{}
	}
	w.Spec.TrainJobTemplate.Labels[key] = value
	return w
}

// TemplateAnnotation sets an annotation of the template's metadata.
func (w *OptimizationJobWrapper) TemplateAnnotation(key, value string) *OptimizationJobWrapper {
	if w.Spec.TrainJobTemplate.Annotations == nil {
		w.Spec.TrainJobTemplate.Annotations = map[string]string{}
	}
	w.Spec.TrainJobTemplate.Annotations[key] = value
	return w
}

// Annotation sets an annotation of the OptimizationJob (its knobs).
func (w *OptimizationJobWrapper) Annotation(key, value string) *OptimizationJobWrapper {
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[key] = value
	return w
}

// UID sets the UID, as the apiserver would.
func (w *OptimizationJobWrapper) UID(uid string) *OptimizationJobWrapper {
	w.ObjectMeta.UID = k8stypes.UID(uid)
	return w
}

// TemplateRuntimeRef points the template at the runtime of the given kind and name.
func (w *OptimizationJobWrapper) TemplateRuntimeRef(kind, name string) *OptimizationJobWrapper {
	w.Spec.TrainJobTemplate.Spec.RuntimeRef = trainer.RuntimeRef{
		APIGroup: ptr.To(trainer.GroupVersion.Group),
		Kind:     ptr.To(kind),
		Name:     name,
	}
	return w
}
