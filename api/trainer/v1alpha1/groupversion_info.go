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
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&TrainJob{}, &TrainJobList{},
		&TrainingRuntime{}, &TrainingRuntimeList{},
		&ClusterTrainingRuntime{}, &ClusterTrainingRuntimeList{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
