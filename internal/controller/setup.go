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

package controller

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/features"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/statusca"
)

// SetupWithManager registers the TrainJob controller. It owns JobSets, and the ConfigMaps, Secrets
// and plugin kinds (PodGroups) it creates; a plugin kind whose CRD is not installed is skipped
// with one log line. A missing JobSet CRD is an error: nothing can run without it.
func (r *TrainJobReconciler) SetupWithManager(mgr ctrl.Manager) error {
	log := mgr.GetLogger().WithName("setup")
	mapper := mgr.GetRESTMapper()
	if err := RequireJobSet(mapper); err != nil {
		return err
	}
	b := ctrl.NewControllerManagedBy(mgr).
		For(&trainer.TrainJob{}, builder.WithPredicates(notOnlyTrainerStatus(), notSettledAtStart())).
		Watches(&trainer.TrainJob{}, newSettledLast().handler()).
		Named("trainjob_controller").
		Owns(&jobsetv1alpha2.JobSet{}, notCreated).
		Owns(&corev1.ConfigMap{}, notCreated).
		Owns(&corev1.Secret{}, notCreated)
	if r.ca != nil {
		// A new CA must reach the CA ConfigMap of every namespace with TrainJobs still built.
		b = b.WatchesRawSource(source.Kind(r.ca.Cache(), &corev1.Secret{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, _ *corev1.Secret) []reconcile.Request {
				return r.unfinishedTrainJobs(ctx)
			}), cert.CAChanged()))
	}
	if r.publisher != nil {
		// A CA ConfigMap deleted or changed by someone else is published again by the next build
		// in its namespace.
		b = b.WatchesRawSource(source.Kind(r.publisher.Cache(), &corev1.ConfigMap{},
			handler.TypedEnqueueRequestsFromMapFunc(func(ctx context.Context, cm *corev1.ConfigMap) []reconcile.Request {
				return r.unfinishedTrainJobs(ctx, client.InNamespace(cm.Namespace))
			}), r.publisher.Disturbed()))
	}
	added := map[string]bool{}
	for _, p := range r.runtime.Framework().WatchExtensionPlugins() {
		for _, rb := range p.ReconcilerBuilders() {
			if !added[rb.Name] {
				added[rb.Name] = true
				b = rb.Add(b, mgr.GetClient())
			}
		}
	}
	// The kinds the plugins build beyond the core ones (PodGroups); a plugin whose CRD is missing
	// is not in the framework (see framework.Options.Installed), and a kind that went missing
	// since would fail the start, so it is checked again.
	for _, k := range r.runtime.Framework().OwnedKinds() {
		if !installed(mapper, k.GVK.GroupKind(), k.GVK.Version) {
			log.Info("CRD not installed; the objects of its kind are not watched", "kind", k.GVK.String())
			continue
		}
		b = b.Owns(k.New(), notCreated)
	}
	return b.Complete(r)
}

// notCreated drops the creation events of owned objects. The controller creates them itself, in
// a reconcile that goes on to compute the status, so reconciling again on their arrival finds
// nothing to do; worse, it may run before the cache holds the object created right after (the
// JobSet after the snapshot) and write that again. Updates and deletions still reconcile, and
// after a restart every TrainJob is reconciled from its own creation event.
var notCreated = builder.WithPredicates(predicate.Funcs{CreateFunc: func(event.CreateEvent) bool { return false }})

// RequireJobSet fails when the JobSet CRD is not served. The manager asks it before waiting for
// its serving certificate, so a cluster without JobSet is told so at once rather than never.
func RequireJobSet(mapper meta.RESTMapper) error {
	if !installed(mapper, jobsetv1alpha2.GroupVersion.WithKind("JobSet").GroupKind(), jobsetv1alpha2.GroupVersion.Version) {
		return fmt.Errorf("the JobSet CRD (jobsets.jobset.x-k8s.io %s) is not installed: install JobSet before Gantry", jobsetv1alpha2.GroupVersion.Version)
	}
	return nil
}

func installed(mapper meta.RESTMapper, gk schema.GroupKind, version string) bool {
	_, err := mapper.RESTMapping(gk, version)
	return err == nil
}

// Option configures SetupControllers.
type Option func(*TrainJobReconciler)

// WithStatusServerCA makes every build read the status server's CA from ca, for the
// TrainJobStatus plugin, and publish it to the TrainJob's namespace (statusca), and rebuild the
// unfinished TrainJobs when it changes. Without it the CA
// is neither read nor watched (the feature gate is off).
func WithStatusServerCA(ca *cert.CABundle) Option {
	return func(r *TrainJobReconciler) { r.ca = ca }
}

// SetupControllers registers the TrainJob controller, both runtime controllers and, with the
// OptimizationJob feature gate, the OptimizationJob controller.
func SetupControllers(mgr ctrl.Manager, rt *core.Runtime, opts ...Option) error {
	//nolint:staticcheck // The core/v1 recorder sets firstTimestamp, which the Kubeflow SDK filters events on.
	recorder := mgr.GetEventRecorderFor("trainer-trainjob-controller")
	tj, err := NewTrainJobReconciler(mgr.GetClient(), mgr.GetAPIReader(), rt, recorder, clock.RealClock{})
	if err != nil {
		return err
	}
	for _, o := range opts {
		o(tj)
	}
	if tj.ca != nil {
		p, err := statusca.New(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper(), mgr.GetClient(), mgr.GetAPIReader(), tj.ca.CA)
		if err != nil {
			return err
		}
		if err := mgr.Add(p.Cache()); err != nil {
			return err
		}
		tj.publisher = p
	}
	if err := metrics.Register(mgr.GetCache()); err != nil {
		return fmt.Errorf("registering metrics: %w", err)
	}
	if err := tj.SetupWithManager(mgr); err != nil {
		return fmt.Errorf("setting up the TrainJob controller: %w", err)
	}
	if features.Enabled(features.OptimizationJob) {
		//nolint:staticcheck // The same recorder as the TrainJob controller's, for the same reason.
		oj, err := NewOptimizationJobReconciler(mgr.GetClient(), mgr.GetEventRecorderFor("gantry-optimizationjob-controller"))
		if err != nil {
			return err
		}
		if err := oj.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the OptimizationJob controller: %w", err)
		}
	}
	for _, newRuntime := range []func(client.Client) (*RuntimeReconciler, error){NewTrainingRuntimeReconciler, NewClusterTrainingRuntimeReconciler} {
		r, err := newRuntime(mgr.GetClient())
		if err != nil {
			return err
		}
		if err := r.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("setting up the %s: %w", r.kindTag, err)
		}
	}
	return nil
}
