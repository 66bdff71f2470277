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

package framework

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// countingClient counts the writes a manager sends (server-side applies, creates, updates and
// patches of objects; status writes are not counted), in all and per namespace, so tests can
// prove that a reconcile with nothing to change writes nothing (a no-op apply would not change
// resourceVersion, and a create of an existing object fails without a trace). Per namespace,
// because a manager that just started reconciles every TrainJob left by earlier specs.
type countingClient struct {
	client.Client
	applies, creates *atomic.Int64
	perNamespace     *namespaceCounts
}

type namespaceCounts struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (n *namespaceCounts) add(ns string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.counts[ns]++
}

func (n *namespaceCounts) get(ns string) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.counts[ns]
}

func (c *countingClient) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.applies.Add(1)
	if m, ok := obj.(interface{ GetNamespace() *string }); ok && m.GetNamespace() != nil {
		c.perNamespace.add(*m.GetNamespace())
	} else if u, ok := obj.(interface{ GetNamespace() string }); ok {
		c.perNamespace.add(u.GetNamespace())
	}
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *countingClient) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.creates.Add(1)
	c.perNamespace.add(obj.GetNamespace())
	return c.Client.Create(ctx, obj, opts...)
}

func (c *countingClient) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.perNamespace.add(obj.GetNamespace())
	return c.Client.Update(ctx, obj, opts...)
}

func (c *countingClient) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.perNamespace.add(obj.GetNamespace())
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func newCountingClient(applies, creates *atomic.Int64, perNamespace *namespaceCounts) func(*rest.Config, client.Options) (client.Client, error) {
	return func(cfg *rest.Config, opts client.Options) (client.Client, error) {
		c, err := client.New(cfg, opts)
		if err != nil {
			return nil, err
		}
		return &countingClient{Client: c, applies: applies, creates: creates, perNamespace: perNamespace}, nil
	}
}
