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

package main

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// observer records when the harness first saw each object through a watch. Server-side
// creationTimestamps have one-second resolution, too coarse for latencies of milliseconds, so
// every time in the report is the harness's clock at the watch event.
type observer struct {
	mu sync.Mutex
	// seen is the first time each object was seen, by name.
	seen map[string]time.Time
	// done is the first time each object was seen in its final state (TrainJobs: Complete).
	done   map[string]time.Time
	isDone func(client.Object) bool
	// watching is closed once a watch is established: objects created before that would be
	// recorded late, at list time.
	watching     chan struct{}
	watchingOnce sync.Once
}

func newObserver(isDone func(client.Object) bool) *observer {
	return &observer{seen: map[string]time.Time{}, done: map[string]time.Time{}, isDone: isDone, watching: make(chan struct{})}
}

// waitWatching waits until the watch is established.
func (o *observer) waitWatching(ctx context.Context) error {
	select {
	case <-o.watching:
		return nil
	case <-time.After(time.Minute):
		return fmt.Errorf("the harness's watch did not start within a minute")
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (o *observer) record(obj client.Object, at time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	name := obj.GetName()
	if _, ok := o.seen[name]; !ok {
		o.seen[name] = at
	}
	if o.isDone != nil && o.isDone(obj) {
		if _, ok := o.done[name]; !ok {
			o.done[name] = at
		}
	}
}

// snapshot copies the recorded times.
func (o *observer) snapshot() (seen, done map[string]time.Time) {
	o.mu.Lock()
	defer o.mu.Unlock()
	seen, done = make(map[string]time.Time, len(o.seen)), make(map[string]time.Time, len(o.done))
	maps.Copy(seen, o.seen)
	maps.Copy(done, o.done)
	return seen, done
}

func (o *observer) counts() (seen, done int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.seen), len(o.done)
}

// waitSeen waits until n objects were seen; waitDone until n reached their final state.
func (o *observer) waitSeen(ctx context.Context, n int, timeout time.Duration, what string) error {
	return o.wait(ctx, timeout, what, func() int { s, _ := o.counts(); return s }, n)
}

func (o *observer) waitDone(ctx context.Context, n int, timeout time.Duration, what string) error {
	return o.wait(ctx, timeout, what, func() int { _, d := o.counts(); return d }, n)
}

func (o *observer) wait(ctx context.Context, timeout time.Duration, what string, count func() int, n int) error {
	if !poll(ctx, 20*time.Millisecond, timeout, func() bool { return count() >= n }) {
		return fmt.Errorf("waiting for %d %s: saw %d within %s", n, what, count(), timeout)
	}
	return nil
}

// poll checks done every interval until it holds, and says whether it did before timeout (or
// ctx) ended.
func poll(ctx context.Context, every, timeout time.Duration, done func() bool) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for !done() {
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
	return true
}

// watchJobSets feeds o with the JobSets of the namespace, metadata only (all the harness needs,
// and the cheapest for the apiserver to send).
func watchJobSets(ctx context.Context, c client.WithWatch, o *observer) {
	newList := func() client.ObjectList {
		l := &metav1.PartialObjectMetadataList{}
		l.SetGroupVersionKind(jobsetv1alpha2.GroupVersion.WithKind("JobSetList"))
		return l
	}
	go watchLoop(ctx, c, newList, o)
}

// watchTrainJobs feeds o with the TrainJobs of the namespace; done means Complete.
func watchTrainJobs(ctx context.Context, c client.WithWatch, o *observer) {
	go watchLoop(ctx, c, func() client.ObjectList { return &trainer.TrainJobList{} }, o)
}

func trainJobComplete(obj client.Object) bool {
	tj, ok := obj.(*trainer.TrainJob)
	return ok && apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete)
}

// watchLoop lists, then watches from the list's resourceVersion, and starts over when the watch
// ends or expires, until ctx ends.
func watchLoop(ctx context.Context, c client.WithWatch, newList func() client.ObjectList, o *observer) {
	for ctx.Err() == nil {
		list := newList()
		if err := c.List(ctx, list, client.InNamespace(benchNamespace)); err != nil {
			sleep(ctx, time.Second)
			continue
		}
		now := time.Now()
		_ = apimeta.EachListItem(list, func(obj apiruntime.Object) error {
			if co, ok := obj.(client.Object); ok {
				o.record(co, now)
			}
			return nil
		})
		rv := list.GetResourceVersion()
		for ctx.Err() == nil {
			var ok bool
			if rv, ok = watchFrom(ctx, c, newList(), rv, o); !ok {
				break // expired or failed: list again
			}
		}
	}
}

// watchFrom watches until the watch ends; it returns the last resourceVersion and false when
// the caller must list again.
func watchFrom(ctx context.Context, c client.WithWatch, list client.ObjectList, rv string, o *observer) (string, bool) {
	w, err := c.Watch(ctx, list, &client.ListOptions{
		Namespace: benchNamespace,
		Raw:       &metav1.ListOptions{ResourceVersion: rv, AllowWatchBookmarks: true},
	})
	if err != nil {
		sleep(ctx, time.Second)
		return rv, false
	}
	defer w.Stop()
	o.watchingOnce.Do(func() { close(o.watching) })
	for ev := range w.ResultChan() {
		now := time.Now()
		if ev.Type == watch.Error {
			return rv, false
		}
		obj, ok := ev.Object.(client.Object)
		if !ok {
			continue
		}
		rv = obj.GetResourceVersion()
		if ev.Type == watch.Added || ev.Type == watch.Modified {
			o.record(obj, now)
		}
	}
	return rv, true
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
