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

package podgroup

import (
	"context"
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Watches re-enqueue suspended TrainJobs when a LimitRange of their namespace or a RuntimeClass
// their runtime uses changes: both change pod requests, hence PodGroup minResources, and a
// suspended job's PodGroup is still re-rendered.
func Watches() framework.ReconcilerBuilder {
	return framework.ReconcilerBuilder{
		Name: "podgroup-inputs",
		Add: func(b *builder.Builder, c client.Client) *builder.Builder {
			return b.
				Watches(&corev1.LimitRange{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
					return suspendedTrainJobs(ctx, c, client.InNamespace(obj.GetNamespace()), nil)
				})).
				Watches(&nodev1.RuntimeClass{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, obj client.Object) []reconcile.Request {
					return suspendedTrainJobs(ctx, c, nil, func(tj *trainer.TrainJob) bool { return usesRuntimeClass(ctx, c, tj, obj.GetName()) })
				}))
		},
	}
}

func suspendedTrainJobs(ctx context.Context, c client.Client, in client.ListOption, match func(*trainer.TrainJob) bool) []reconcile.Request {
	list := &trainer.TrainJobList{}
	var opts []client.ListOption
	if in != nil {
		opts = append(opts, in)
	}
	if err := c.List(ctx, list, opts...); err != nil {
		ctrl.LoggerFrom(ctx).Error(err, "Listing TrainJobs to re-render after a change of pod sizes")
		return nil
	}
	var reqs []reconcile.Request
	for i := range list.Items {
		tj := &list.Items[i]
		if !trainjob.Suspended(tj) || (match != nil && !match(tj)) {
			continue
		}
		reqs = append(reqs, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(tj)})
	}
	return reqs
}

// usesRuntimeClass reports whether any pod template of the runtime tj builds from (its snapshot,
// else the live runtime) names the RuntimeClass.
func usesRuntimeClass(ctx context.Context, c client.Client, tj *trainer.TrainJob, name string) bool {
	rt, _, err := ref.ResolveRuntime(ctx, c, tj, ref.SnapshotThenLive)
	if err != nil {
		return false
	}
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return false
	}
	return slices.Contains(core.RuntimeClassNames(spec), name)
}
