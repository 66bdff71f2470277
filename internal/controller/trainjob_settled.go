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
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// A starting manager lists every TrainJob of the cluster and reconciles each once. With
// client-go's FIFO work queue a TrainJob that changed while the manager was away waited behind
// every settled one listed before it: with thousands of settled TrainJobs, minutes. Settled
// TrainJobs of the initial list (finished, not being deleted) are therefore held back and fed to
// the queue only while it is nearly empty, so live TrainJobs and fresh events are never more than
// settledQueueDepth items behind. Every TrainJob is still reconciled once after a start (the
// outcome finalizer of a JobSet whose TrainJob finished just before a crash is released, TTLs are
// scheduled), in the same total time.
const (
	// settledQueueDepth is the queue length held-back TrainJobs are topped up to.
	settledQueueDepth = 100
	// settledFeedPeriod is how often the queue's length is looked at while TrainJobs are held.
	settledFeedPeriod = 5 * time.Millisecond
)

// settledAtStart says whether a create event is a settled TrainJob of the initial list.
func settledAtStart(e event.CreateEvent) bool {
	tj, ok := e.Object.(*trainer.TrainJob)
	return ok && e.IsInInitialList && tj.DeletionTimestamp.IsZero() && trainjob.Finished(&tj.Status)
}

// notSettledAtStart keeps settled TrainJobs of the initial list away from the controller's own
// TrainJob handler; settledLast enqueues them.
func notSettledAtStart() predicate.Predicate {
	return predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return !settledAtStart(e) }}
}

// settledLast enqueues the settled TrainJobs of the initial list behind everything else.
type settledLast struct {
	depth int
	// ticks paces the feeding (tests drive it); nil is a ticker of settledFeedPeriod. The first
	// top-up waits for a tick, so the live TrainJobs of the same initial list go first.
	ticks <-chan time.Time

	mu      sync.Mutex
	pending []reconcile.Request
	feeding bool
}

func newSettledLast() *settledLast {
	return &settledLast{depth: settledQueueDepth}
}

// handler sees only the settled TrainJobs of the initial list; the controller's own handler
// (behind notSettledAtStart) sees every other event.
func (s *settledLast) handler() handler.EventHandler {
	return handler.Funcs{CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		if !settledAtStart(e) {
			return
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		s.pending = append(s.pending, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
		if !s.feeding {
			s.feeding = true
			// Not ctx: controller-runtime cancels it as soon as this call returns. The
			// controller shuts the queue down when it stops, which ends the feeding.
			go s.feed(q)
		}
	}}
}

// feed tops the queue up to depth from the held-back TrainJobs at every tick until none is left
// or the queue shuts down.
func (s *settledLast) feed(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	ticks := s.ticks
	if ticks == nil {
		t := time.NewTicker(settledFeedPeriod)
		defer t.Stop()
		ticks = t.C
	}
	for range ticks {
		if !s.topUp(q) {
			return
		}
	}
}

// topUp moves held-back TrainJobs to the queue while it is shorter than depth, and says whether
// any are left to feed.
func (s *settledLast) topUp(q workqueue.TypedRateLimitingInterface[reconcile.Request]) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if q.ShuttingDown() {
		s.pending, s.feeding = nil, false
		return false
	}
	n := max(min(s.depth-q.Len(), len(s.pending)), 0)
	for _, req := range s.pending[:n] {
		q.Add(req)
	}
	s.pending = s.pending[n:]
	if len(s.pending) == 0 {
		s.pending, s.feeding = nil, false
		return false
	}
	return true
}
