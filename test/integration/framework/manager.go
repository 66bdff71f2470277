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
	"fmt"
	"sync"
	"sync/atomic"

	ctrl "sigs.k8s.io/controller-runtime"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/gantry-ml/gantry/internal/config"
)

// Manager is an in-process manager of a test, started by StartManager.
type Manager struct {
	manager.Manager
	cancel  context.CancelFunc
	done    sync.WaitGroup
	err     error
	applies atomic.Int64
	creates atomic.Int64
	writes  namespaceCounts
}

// Applies is how many server-side applies the manager's client has sent.
func (m *Manager) Applies() int64 {
	return m.applies.Load()
}

// Writes is how many server-side applies and creates the manager's client has sent.
func (m *Manager) Writes() int64 {
	return m.applies.Load() + m.creates.Load()
}

// WritesIn is how many writes of objects (applies, creates, updates, patches; not status) the
// manager's client has sent into namespace ns.
func (m *Manager) WritesIn(ns string) int64 {
	return m.writes.get(ns)
}

// StartManager starts a manager against the control plane with the production cache settings,
// after setup registered what the test needs. Stop it with Stop.
func (f *Framework) StartManager(ctx context.Context, setup func(manager.Manager) error) (*Manager, error) {
	m := &Manager{writes: namespaceCounts{counts: map[string]int64{}}}
	opts := ctrl.Options{
		NewClient:              newCountingClient(&m.applies, &m.creates, &m.writes),
		Scheme:                 f.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Cache:                  config.CacheOptions(),
		// Suites start a manager per container; controller names repeat across them. The work
		// queue is production's (config.Options): client-go's, not controller-runtime's
		// priority queue.
		Controller: ctrlconfig.Controller{SkipNameValidation: ptrTo(true), UsePriorityQueue: ptrTo(false)},
	}
	if f.Webhooks {
		opts.WebhookServer = f.webhookServer()
	}
	mgr, err := ctrl.NewManager(f.Config, opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := setup(mgr); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	m.Manager, m.cancel = mgr, cancel
	m.done.Go(func() {
		m.err = mgr.Start(ctx)
	})
	if !mgr.GetCache().WaitForCacheSync(ctx) {
		cancel()
		return nil, fmt.Errorf("the manager's cache did not sync")
	}
	if f.Webhooks {
		if err := f.waitForWebhooks(); err != nil {
			cancel()
			return nil, err
		}
	}
	return m, nil
}

// Stop stops the manager and returns its error, if any.
func (m *Manager) Stop() error {
	m.cancel()
	m.done.Wait()
	return m.err
}

func ptrTo[T any](v T) *T { return &v }
