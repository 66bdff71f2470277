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

// FieldOwner is the field manager of everything the controller writes.
const FieldOwner = "trainer"

// applyObjects writes the objects a TrainJob needs, each as its mode says, and only when the
// object in the cache differs from what it would write: a reconcile with nothing to change makes
// no write. Existence checks read the cache, which holds every kind the controller owns.
func (r *TrainJobReconciler) applyObjects(ctx context.Context, tj *trainer.TrainJob, objs []runtime.Object) error {
	for _, o := range objs {
		existing, write, err := r.shouldWrite(ctx, tj, o)
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
		if o.Mode == runtime.ApplyIfAbsent {
			// shouldWrite says yes only when the cache has no such object.
			if err := r.create(ctx, o.Object); err != nil {
				return err
			}
			continue
		}
		if err := r.apply(ctx, o.Object, existing); err != nil {
			return err
		}
		if _, isJobSet := o.Object.(*jobsetv1alpha2.JobSet); isJobSet && existing == nil {
			metrics.JobSetCreationSeconds.Observe(r.clock.Since(tj.CreationTimestamp.Time).Seconds())
		}
	}
	return nil
}

// apply server-side applies obj unless existing (nil when absent) already has every field.
func (r *TrainJobReconciler) apply(ctx context.Context, obj, existing client.Object) error {
	u, err := runtime.ToUnstructured(obj)
	if err != nil {
		return fmt.Errorf("converting %s: %w", describe(obj), err)
	}
	if existing != nil && upToDate(u, existing) {
		return nil
	}
	ac := client.ApplyConfigurationFromUnstructured(&unstructured.Unstructured{Object: u})
	if err := r.client.Apply(ctx, ac, client.FieldOwner(FieldOwner), client.ForceOwnership); err != nil {
		return fmt.Errorf("applying %s: %w", describe(obj), err)
	}
	return nil
}

// create writes an object that is never updated. A create, not an apply: it is cheaper for the
// apiserver, and when the cache has not seen the object yet, it exists already and stays as it
// is (an apply would overwrite the runtime snapshot or the SSH keys with new ones).
func (r *TrainJobReconciler) create(ctx context.Context, obj client.Object) error {
	if err := r.client.Create(ctx, obj, client.FieldOwner(FieldOwner)); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s: %w", describe(obj), err)
	}
	return nil
}

// shouldWrite decides by the object's apply mode and what exists, and returns the existing
// object (nil when absent).
func (r *TrainJobReconciler) shouldWrite(ctx context.Context, tj *trainer.TrainJob, o runtime.Object) (client.Object, bool, error) {
	existing, ok := o.DeepCopyObject().(client.Object)
	if !ok {
		return nil, false, fmt.Errorf("%T is not a client.Object", o.Object)
	}
	err := r.client.Get(ctx, client.ObjectKeyFromObject(o.Object), existing)
	switch {
	case apierrors.IsNotFound(err):
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading %s: %w", describe(o.Object), err)
	}
	switch o.Mode {
	case runtime.ApplyIfAbsent:
		return existing, false, nil
	case runtime.ApplyUnlessRunning:
		// Written while the TrainJob or the object itself is suspended.
		return existing, ptr.Deref(tj.Spec.Suspend, false) || suspended(existing), nil
	default:
		return existing, true, nil
	}
}

// upToDate reports whether every field of desired already has that value in existing (which
// also holds what the apiserver and other controllers added). When unsure, it says no and the
// object is applied.
func upToDate(desired map[string]any, existing client.Object) bool {
	current, err := runtime.ToUnstructured(existing)
	if err != nil {
		return false
	}
	// Typed objects from the cache carry no apiVersion and kind.
	want := make(map[string]any, len(desired))
	for k, v := range desired {
		if k != "apiVersion" && k != "kind" {
			want[k] = v
		}
	}
	return runtime.Subset(want, current)
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
