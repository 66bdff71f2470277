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
// the namespace costs no request. The name is reserved, as kube-root-ca.crt is for the cluster's
// CA: whoever creates, edits or deletes a ConfigMap of that name, Gantry makes it hold the status
// server's CA again, so no one can make the training pods of a namespace trust another CA.
package statusca

import (
	"context"
	"fmt"
	"maps"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// Publisher writes the CA ConfigMaps. It sees every ConfigMap of the reserved name through a
// cache of its own (the manager's ConfigMap cache holds only what belongs to a TrainJob), and
// remembers what it wrote, so the builds right after a write, before the cache has it, do not
// write again.
type Publisher struct {
	cache cache.Cache
	// reader reads from cache.
	reader    client.Reader
	client    client.Client
	apiReader client.Reader
	// ca reads the CA to publish; Disturbed compares events with it.
	ca func(context.Context) (string, error)

	mu sync.Mutex
	// published is the CA written, or found current, per namespace in this process's life;
	// Disturbed drops a namespace whose ConfigMap no longer holds it.
	published map[string]string
	// locks serialize the publishing of one namespace; other namespaces go on meanwhile.
	locks map[string]*sync.Mutex
}

// New returns a Publisher writing through c and reading uncached through apiReader; ca reads
// the CA to publish. Add Cache() to the manager.
func New(cfg *rest.Config, scheme *runtime.Scheme, mapper meta.RESTMapper, c client.Client, apiReader client.Reader,
	ca func(context.Context) (string, error)) (*Publisher, error) {
	cc, err := cache.New(cfg, cache.Options{
		Scheme:               scheme,
		Mapper:               mapper,
		DefaultFieldSelector: fields.OneTermEqualSelector("metadata.name", trainjobstatus.CAConfigMapName),
		DefaultTransform:     cache.TransformStripManagedFields(),
	})
	if err != nil {
		return nil, fmt.Errorf("creating the cache of the status server CA ConfigMaps: %w", err)
	}
	return &Publisher{cache: cc, reader: cc, client: c, apiReader: apiReader, ca: ca,
		published: map[string]string{}, locks: map[string]*sync.Mutex{}}, nil
}

// Cache is the cache of the CA ConfigMaps; it is a manager Runnable and a watch source.
func (p *Publisher) Cache() cache.Cache {
	return p.cache
}

// Publish makes the CA ConfigMap of namespace hold ca. A write the apiserver refuses for good (a
// quota, an admission policy, a namespace being deleted) is returned as a problem: progress
// reporting is optional, and the TrainJob runs without it.
func (p *Publisher) Publish(ctx context.Context, namespace, ca string) (problem string, err error) {
	unlock := p.lock(namespace)
	defer unlock()
	if p.known(namespace) == ca {
		return "", nil
	}
	err = p.publish(ctx, namespace, ca)
	switch {
	case err == nil:
		p.mu.Lock()
		p.published[namespace] = ca
		p.mu.Unlock()
		return "", nil
	case apierrors.IsForbidden(err) || apierrors.IsInvalid(err):
		return fmt.Sprintf("publishing the status server CA to ConfigMap %s/%s was refused: %v", namespace, trainjobstatus.CAConfigMapName, err), nil
	default:
		return "", fmt.Errorf("publishing the status server CA to ConfigMap %s/%s: %w", namespace, trainjobstatus.CAConfigMapName, err)
	}
}

// publish creates the ConfigMap, or brings the existing one back to ca.
func (p *Publisher) publish(ctx context.Context, namespace, ca string) error {
	key := client.ObjectKey{Namespace: namespace, Name: trainjobstatus.CAConfigMapName}
	existing := &corev1.ConfigMap{}
	err := p.reader.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		if err = p.client.Create(ctx, trainjobstatus.CAConfigMap(namespace, ca)); !apierrors.IsAlreadyExists(err) {
			return err
		}
		// The cache had not seen it yet.
		err = p.apiReader.Get(ctx, key, existing)
	}
	if err != nil || current(existing, ca) {
		return err
	}
	err = p.replace(ctx, existing, ca)
	if apierrors.IsConflict(err) {
		// Changed since the cache read it (a rotation, an edit): once more, from the apiserver.
		if err = p.apiReader.Get(ctx, key, existing); err != nil || current(existing, ca) {
			return err
		}
		err = p.replace(ctx, existing, ca)
	}
	return err
}

// replace makes existing hold ca and nothing else; an immutable one is deleted and created again.
func (p *Publisher) replace(ctx context.Context, existing *corev1.ConfigMap, ca string) error {
	want := trainjobstatus.CAConfigMap(existing.Namespace, ca)
	if existing.Immutable != nil && *existing.Immutable {
		if err := p.client.Delete(ctx, existing, client.Preconditions{UID: &existing.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
		return p.client.Create(ctx, want)
	}
	cm := existing.DeepCopy()
	cm.Data, cm.BinaryData = want.Data, nil
	if cm.Labels == nil {
		cm.Labels = map[string]string{}
	}
	maps.Copy(cm.Labels, want.Labels)
	// The resourceVersion read makes this a compare-and-swap: a concurrent change fails it.
	return p.client.Update(ctx, cm)
}

// current reports whether cm holds exactly what Gantry publishes for ca.
func current(cm *corev1.ConfigMap, ca string) bool {
	want := trainjobstatus.CAConfigMap(cm.Namespace, ca)
	return len(cm.Data) == 1 && cm.Data[trainjobstatus.CAKey] == ca && len(cm.BinaryData) == 0 &&
		cm.Labels[trainjobstatus.CALabel] == want.Labels[trainjobstatus.CALabel]
}

func (p *Publisher) known(namespace string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.published[namespace]
}

func (p *Publisher) lock(namespace string) func() {
	p.mu.Lock()
	l, ok := p.locks[namespace]
	if !ok {
		l = &sync.Mutex{}
		p.locks[namespace] = l
	}
	p.mu.Unlock()
	l.Lock()
	return l.Unlock
}

// Disturbed passes the events after which a namespace's CA ConfigMap does not hold the CA: its
// deletion, or its creation or change by anyone with other content. It forgets the namespace as
// it passes them, so the builds they cause publish again. Gantry's own writes do not pass.
func (p *Publisher) Disturbed() predicate.TypedPredicate[*corev1.ConfigMap] {
	disturbed := func(cm *corev1.ConfigMap, deleted bool) bool {
		if !deleted {
			if ca, err := p.ca(context.Background()); err == nil && current(cm, ca) {
				return false
			}
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		delete(p.published, cm.Namespace)
		return true
	}
	return predicate.TypedFuncs[*corev1.ConfigMap]{
		CreateFunc:  func(e event.TypedCreateEvent[*corev1.ConfigMap]) bool { return disturbed(e.Object, false) },
		UpdateFunc:  func(e event.TypedUpdateEvent[*corev1.ConfigMap]) bool { return disturbed(e.ObjectNew, false) },
		DeleteFunc:  func(e event.TypedDeleteEvent[*corev1.ConfigMap]) bool { return disturbed(e.Object, true) },
		GenericFunc: func(event.TypedGenericEvent[*corev1.ConfigMap]) bool { return false },
	}
}
