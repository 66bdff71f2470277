package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// environment reads what the build needs from the cluster: the status server's CA when the
// TrainJobStatus plugin runs (from a cache of that one Secret), and what the cluster will add to
// the pods for runtimes that size a PodGroup from their requests; other runtimes need none of it,
// so nothing is read for them.
func (r *TrainJobReconciler) environment(ctx context.Context, tj *trainer.TrainJob, rt client.Object) (*runtime.Environment, error) {
	spec, err := core.RuntimeSpec(rt)
	if err != nil {
		return nil, err
	}
	env := &runtime.Environment{}
	if r.ca != nil {
		if env.StatusServerCA, err = r.ca.CA(ctx); err != nil {
			return nil, fmt.Errorf("reading the status server CA: %w", err)
		}
	}
	if spec.PodGroupPolicy == nil {
		return env, nil
	}
	limitRanges := &corev1.LimitRangeList{}
	if err := r.client.List(ctx, limitRanges, client.InNamespace(tj.Namespace)); err != nil {
		return nil, fmt.Errorf("listing LimitRanges: %w", err)
	}
	env.LimitRanges = limitRanges.Items
	env.RuntimeClasses = map[string]*nodev1.RuntimeClass{}
	for _, name := range core.RuntimeClassNames(spec) {
		rc := &nodev1.RuntimeClass{}
		if err := r.client.Get(ctx, client.ObjectKey{Name: name}, rc); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the pods will be refused at creation; nothing to add meanwhile
			}
			return nil, fmt.Errorf("reading RuntimeClass %q: %w", name, err)
		}
		env.RuntimeClasses[name] = rc
	}
	return env, nil
}
