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

// Package statusca publishes the status server's CA to the namespaces that run TrainJobs: one
// ConfigMap per namespace (trainjobstatus.CAConfigMapName), created by the first TrainJob built
// there and kept current when the CA rotates, instead of one per TrainJob. Every later build in
// the namespace costs no request.
package statusca

import (
	"context"
	"fmt"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// Publisher writes the CA ConfigMaps. It sees them through a cache of its own holding only the
// labelled ones (the manager's ConfigMap cache holds only what belongs to a TrainJob), and
// remembers what it wrote so that the builds right after a write, before the cache has it, do
// not write again.
type Publisher struct {
	cache     cache.Cache
	client    client.Client
	apiReader client.Reader

	mu sync.Mutex
	// published is the CA written, or found current, per namespace in this process's life;
	// Disturbed drops a namespace whose ConfigMap was deleted or changed by someone else.
	published map[string]string
}

// New returns a Publisher writing through c and reading uncached through apiReader. Add Cache()
// to the manager.
func New(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, c client.Client, apiReader client.Reader) (*Publisher, error) {
	req, err := labels.NewRequirement(trainjobstatus.CALabel, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	cc, err := cache.New(cfg, cache.Options{
		Scheme:               scheme,
		Mapper:               mapper,
		DefaultLabelSelector: labels.NewSelector().Add(*req),
		DefaultTransform:     cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the status server CA ConfigMaps: %w", err)
	}
	return &Publisher{cache: cc, client: c, apiReader: apiReader, published: map[string]string{}}, nil
}

// Cache is the cache of the CA ConfigMaps; it is a manager Runnable and a watch source.
func (p *Publisher) Cache() cache.Cache {
	return p.cache
}

// Publish makes the CA ConfigMap of namespace hold ca. It returns a problem, and writes nothing,
// when a ConfigMap of that name exists that Gantry did not publish: pods must not trust a CA
// someone else chose, so progress reporting stays off in that namespace until it is removed.
func (p *Publisher) Publish(ctx context.Context, namespace, ca string) (problem string, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.published[namespace] == ca {
		return "", nil
	}
	key := client.ObjectKey{Namespace: namespace, Name: trainjobstatus.CAConfigMapName}
	existing := &corev1.ConfigMap{}
	err = p.cache.Get(ctx, key, existing)
	switch {
	case apierrors.IsNotFound(err):
		err = p.client.Create(ctx, trainjobstatus.CAConfigMap(namespace, ca))
		if apierrors.IsAlreadyExists(err) {
			// Someone else's (the cache shows only Gantry's), or one the cache has not seen yet.
			if err = p.apiReader.Get(ctx, key, existing); err == nil {
				return p.update(ctx, existing, ca)
			}
		}
	case err == nil:
		return p.update(ctx, existing, ca)
	}
	if err != nil {
		return "", fmt.Errorf("publishing the status server CA to ConfigMap %s: %w", key, err)
	}
	p.published[namespace] = ca
	return "", nil
}

// update makes the existing ConfigMap hold ca, if Gantry published it.
func (p *Publisher) update(ctx context.Context, existing *corev1.ConfigMap, ca string) (string, error) {
	if _, ours := existing.Labels[trainjobstatus.CALabel]; !ours {
		return fmt.Sprintf("ConfigMap %s/%s exists and Gantry did not publish it (it lacks the label %s), so it is not trusted as the status server CA; delete it to turn progress reporting on in this namespace",
			existing.Namespace, existing.Name, trainjobstatus.CALabel), nil
	}
	if existing.Data[trainjobstatus.CAKey] != ca {
		existing = existing.DeepCopy()
		existing.Data = map[string]string{trainjobstatus.CAKey: ca}
		// The resourceVersion read makes this a compare-and-swap: a concurrent change fails it.
		if err := p.client.Update(ctx, existing); err != nil {
			return "", fmt.Errorf("publishing the status server CA to ConfigMap %s/%s: %w", existing.Namespace, existing.Name, err)
		}
	}
	p.published[existing.Namespace] = ca
	return "", nil
}

// Disturbed passes the events after which a namespace's CA ConfigMap no longer holds what was
// published there: its deletion, or a change of its CA by someone else. It forgets the namespace
// as it passes them, so the builds they cause publish again.
func (p *Publisher) Disturbed() predicate.TypedPredicate[*corev1.ConfigMap] {
	disturbed := func(cm *corev1.ConfigMap, deleted bool) bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		want, known := p.published[cm.Namespace]
		if !known || (!deleted && cm.Data[trainjobstatus.CAKey] == want) {
			return false
		}
		delete(p.published, cm.Namespace)
		return true
	}
	return predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc:  func(event.TypedCreateEvent[*corev1.ConfigMap]) bool { return false },
		UpdateFunc:  func(e event.TypedUpdateEvent[*corev1.ConfigMap]) bool { return disturbed(e.ObjectNew, false) },
		DeleteFunc:  func(e event.TypedDeleteEvent[*corev1.ConfigMap]) bool { return disturbed(e.Object, true) },
		GenericFunc: func(event.TypedGenericEvent[*corev1.ConfigMap]) bool { return false },
	}
}
