package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	// GroupVersion is the group and version of the configuration API.
	GroupVersion = schema.GroupVersion{Group: "config.trainer.kubeflow.org", Version: "v1alpha1"}

	// SchemeBuilder registers the kinds of this package with a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme adds the configuration kinds to a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(s *runtime.Scheme) error {
	s.AddKnownTypes(GroupVersion,
		&Configuration{},
	)
	metav1.AddToGroupVersion(s, GroupVersion)
	return nil
}
