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

package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of this API.
	GroupVersion = schema.GroupVersion{Group: "trainer.kubeflow.org", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the kinds of this package to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Kind names, used where a GroupKind must be spelled out (runtime references, owner references).
const (
	TrainJobKind               = "TrainJob"
	TrainingRuntimeKind        = "TrainingRuntime"
	ClusterTrainingRuntimeKind = "ClusterTrainingRuntime"
	OptimizationJobKind        = "OptimizationJob"
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&TrainJob{}, &TrainJobList{},
		&TrainingRuntime{}, &TrainingRuntimeList{},
		&ClusterTrainingRuntime{}, &ClusterTrainingRuntimeList{},
		&OptimizationJob{}, &OptimizationJobList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
