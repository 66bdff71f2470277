package controller

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// FieldOwner is the server-side apply field manager of everything the controller writes.
const FieldOwner = "trainer"

// applyObjects writes the objects a TrainJob needs, each as its mode says. Existence checks read
// the cache, which holds every kind the controller owns.
func (r *TrainJobReconciler) applyObjects(ctx context.Context, tj *trainer.TrainJob, objs []runtime.Object) error {
	for _, o := range objs {
		write, absent, err := r.shouldWrite(ctx, tj, o)
		if err != nil {
			return err
		}
		if !write {
			continue
		}
		if o.Complete != nil {
			if err := o.Complete(); err != nil {
				return err
			}
		}
		u, err := runtime.ToUnstructured(o.Object)
		if err != nil {
			return fmt.Errorf("converting %s: %w", describe(o.Object), err)
		}
		ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
		if err := r.client.Apply(ctx, ac, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s: %w", describe(o.Object), err)
		}
		if _, isJobSet := o.Object.(*jobsetv1alpha2.JobSet); isJobSet && absent {
			metrics.JobSetCreationSeconds.Observe(r.clock.Since(tj.CreationTimestamp.Time).Seconds())
		}
	}
	return nil
}

// shouldWrite decides by the object's apply mode and what exists; absent reports that the object
// was checked and does not exist yet.
func (r *TrainJobReconciler) shouldWrite(ctx context.Context, tj *trainer.TrainJob, o runtime.Object) (write, absent bool, err error) {
	if o.Mode == runtime.ApplyAlways {
		return true, false, nil
	}
	existing, ok := o.DeepCopyObject().(client.Object)
	if !ok {
		return false, false, fmt.Errorf("%T is not a client.Object", o.Object)
	}
	err = r.client.Get(ctx, client.ObjectKeyFromObject(o.Object), existing)
	switch {
	case apierrors.IsNotFound(err):
		return true, true, nil
	case err != nil:
		return false, false, fmt.Errorf("reading %s: %w", describe(o.Object), err)
	case o.Mode == runtime.ApplyIfAbsent:
		return false, false, nil
	}
	// ApplyUnlessRunning: write while the TrainJob or the object itself is suspended.
	return ptr.Deref(tj.Spec.Suspend, false) || suspended(existing), false, nil
}

// suspended reads spec.suspend of objects that have one (JobSets); others are never suspended.
func suspended(obj client.Object) bool {
	u, err := runtime.ToUnstructured(obj)
	if err != nil {
		return false
	}
	s, found, _ := unstructured.NestedBool(u, "spec", "suspend")
	return found && s
}

func describe(obj client.Object) string {
	return fmt.Sprintf("%s %s/%s", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetNamespace(), obj.GetName())
}
