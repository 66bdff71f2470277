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

package config

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/gantry-ml/gantry/internal/cert"
)

// stopBound is how long a controller with Gantry's options may take to stop once cancelled while
// its queue is busy: its reconciles here return at once, so anything longer is a stuck worker.
const stopBound = 5 * time.Second

// TestControllerStopsWithABusyQueue: a controller built with the manager's options, its 40
// workers busy with a stream of keys, stops within seconds of its context's cancellation. The
// leader releases its lease only after its controllers stop, so a stuck worker turns a SIGTERM
// failover into a wait for the pod's grace period and the lease's expiry (R3 measured 45.8 s).
// controller-runtime v0.24's priority queue can deadlock there (a ready item sent to a worker
// that already left for shutdown, with the queue's locks held); GANTRY_TEST_PRIORITY_QUEUE=1
// turns it back on to show this test catching it.
func TestControllerStopsWithABusyQueue(t *testing.T) {
	cfg, err := Load("")
	if err != nil {
		t.Fatal(err)
	}
	opts := Options(cfg, nil, cert.NewPair(t.TempDir()))
	opts.Metrics.BindAddress = "0"
	opts.HealthProbeBindAddress = "0"
	opts.LeaderElection = false
	opts.Cache = cache.Options{} // its per-object settings would ask the apiserver for mappings
	if usePriorityQueue() {
		opts.Controller.UsePriorityQueue = new(true)
	}
	// Nothing here reaches this address: the controller's only source is a channel.
	mgr, err := ctrl.NewManager(&rest.Config{Host: "https://127.0.0.1:1"}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if took := stopBusyController(t, mgr, i); took > stopBound {
			t.Fatalf("run %d: the controller took %s to stop after cancel, want at most %s", i, took, stopBound)
		}
	}
}

// stopBusyController runs one controller fed keys as fast as its workers take them, cancels it
// after a moment, and returns how long it took to stop (stopBound and a bit when it did not).
func stopBusyController(t *testing.T, mgr ctrl.Manager, run int) time.Duration {
	t.Helper()
	var reconciled atomic.Int64
	busy := make(chan struct{})
	c, err := controller.New(fmt.Sprintf("busy-%d", run), mgr, controller.Options{
		MaxConcurrentReconciles: 40,
		SkipNameValidation:      new(true),
		Reconciler: reconcile.Func(func(context.Context, reconcile.Request) (reconcile.Result, error) {
			if reconciled.Add(1) == 2000 {
				close(busy)
			}
			return reconcile.Result{}, nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	events := make(chan event.GenericEvent)
	if err := c.Watch(source.Channel(events, &handler.EnqueueRequestForObject{})); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	feedCtx, stopFeed := context.WithCancel(t.Context())
	defer stopFeed()
	go feed(feedCtx, events)
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		_ = c.Start(ctx)
	}()
	select {
	case <-busy:
	case <-stopped:
		t.Fatalf("run %d: the controller stopped before it was cancelled", run)
	}
	start := time.Now()
	cancel()
	select {
	case <-stopped:
		return time.Since(start)
	case <-time.After(stopBound + time.Second):
		return time.Since(start)
	}
}

// feed sends events for 500 keys in turn until cancelled, so the queue always holds ready items
// and stays small.
func feed(ctx context.Context, events chan<- event.GenericEvent) {
	for i := 0; ; i++ {
		obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: fmt.Sprintf("job-%d", i%500)}}
		select {
		case events <- event.GenericEvent{Object: obj}:
		case <-ctx.Done():
			return
		}
	}
}

// usePriorityQueue is the test-only switch that shows this test able to fail.
func usePriorityQueue() bool { return os.Getenv("GANTRY_TEST_PRIORITY_QUEUE") == "1" }
