package runtime

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// OwnedBy is the metadata of an object Gantry builds for tj: the name, tj's namespace, and tj as
// its controller, so that the garbage collector deletes it with the TrainJob and the controller
// reconciles tj when it changes.
func OwnedBy(tj *trainer.TrainJob, name string) metav1.ObjectMeta {
	return metav1.ObjectMeta{
		Name:            name,
		Namespace:       tj.Namespace,
		OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tj, trainer.GroupVersion.WithKind(trainer.TrainJobKind))},
	}
}
