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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestSettledTrainJobsLastAfterAStart plays a start's initial list through the controller's two
// TrainJob handlers as SetupWithManager wires them, then a fresh event, and reads the order in
// which the queue hands the TrainJobs to the workers.
func TestSettledTrainJobsLastAfterAStart(t *testing.T) {
	finished := func(name, cond string) *trainer.TrainJob {
		tj := utiltesting.MakeTrainJobWrapper("ns", name).Obj()
		tj.Status.Conditions = []metav1.Condition{{Type: cond, Status: metav1.ConditionTrue}}
		return tj
	}
	deleting := finished("deleting", trainer.TrainJobComplete)
	deleting.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	running := utiltesting.MakeTrainJobWrapper("ns", "running").Obj()
	running.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionFalse}}
	type ev struct {
		obj     *trainer.TrainJob
		initial bool
	}
	cases := map[string]struct {
		depth  int
		events []ev
		// fresh is created once the initial list has been played and freshAfter items taken.
		fresh      *trainer.TrainJob
		freshAfter int
		want       []string
	}{
		"settled ones behind live ones and a fresh event": {
			depth: 1,
			events: []ev{
				{finished("done-1", trainer.TrainJobComplete), true},
				{finished("failed-1", trainer.TrainJobFailed), true},
				{utiltesting.MakeTrainJobWrapper("ns", "new").Obj(), true},
				{finished("done-2", trainer.TrainJobComplete), true},
				{deleting, true},
				{running, true},
			},
			fresh:      utiltesting.MakeTrainJobWrapper("ns", "fresh").Obj(),
			freshAfter: 1,
			want:       []string{"new", "deleting", "running", "fresh", "done-1", "failed-1", "done-2"},
		},
		"a finished TrainJob created after the start is not held back": {
			depth: 1,
			events: []ev{
				{finished("done-1", trainer.TrainJobComplete), true},
				{utiltesting.MakeTrainJobWrapper("ns", "new").Obj(), true},
			},
			fresh:      finished("done-later", trainer.TrainJobComplete),
			freshAfter: 1,
			want:       []string{"new", "done-later", "done-1"},
		},
		"held-back ones fill the queue up to its depth": {
			depth: 3,
			events: []ev{
				{finished("done-1", trainer.TrainJobComplete), true},
				{finished("done-2", trainer.TrainJobComplete), true},
				{finished("done-3", trainer.TrainJobComplete), true},
				{finished("done-4", trainer.TrainJobComplete), true},
				{utiltesting.MakeTrainJobWrapper("ns", "new").Obj(), true},
			},
			fresh:      utiltesting.MakeTrainJobWrapper("ns", "fresh").Obj(),
			freshAfter: 2,
			want:       []string{"new", "done-1", "done-2", "done-3", "fresh", "done-4"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
			defer q.ShutDown()
			own := &handler.EnqueueRequestForObject{}
			pred := notSettledAtStart()
			ticks := make(chan time.Time)
			defer close(ticks)
			s := &settledLast{depth: tc.depth, ticks: ticks}
			settled := s.handler()
			create := func(tj *trainer.TrainJob, initial bool) {
				// As controller-runtime's informer handler does: the context ends with the call.
				ctx, cancel := context.WithCancel(ctx)
				defer cancel()
				e := event.CreateEvent{Object: tj, IsInInitialList: initial}
				if pred.Create(e) {
					own.Create(ctx, e, q)
				}
				settled.Create(ctx, e, q)
			}
			for _, e := range tc.events {
				create(e.obj, e.initial)
			}
			var got []string
			// take hands the next item to a worker; while the queue is empty it tops it up as the
			// feeder's tick would (the feeder itself never ticks here, so the order is exact).
			take := func() {
				if q.Len() == 0 && !s.topUp(q) && q.Len() == 0 {
					t.Fatalf("nothing left to feed after %v", got)
				}
				req, shutdown := q.Get()
				if shutdown {
					t.Fatal("the queue shut down")
				}
				got = append(got, req.Name)
				q.Done(req)
			}
			for range tc.freshAfter {
				take()
			}
			create(tc.fresh, false)
			for len(got) < len(tc.want) {
				take()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("order of reconciles (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSettledLastFeedsEverything runs the feeder on its own ticker: every held-back TrainJob
// reaches the queue, in the order listed, and the feeder stops once none is left.
func TestSettledLastFeedsEverything(t *testing.T) {
	ctx := t.Context()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	s := newSettledLast()
	h := s.handler()
	var want []string
	for i := range 3 * settledQueueDepth {
		tj := utiltesting.MakeTrainJobWrapper("ns", fmt.Sprintf("done-%d", i)).Obj()
		tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
		// As controller-runtime's informer handler does: the context ends with the call.
		ctx, cancel := context.WithCancel(ctx)
		h.Create(ctx, event.CreateEvent{Object: tj, IsInInitialList: true}, q)
		cancel()
		want = append(want, tj.Name)
	}
	stuck := time.AfterFunc(10*time.Second, q.ShutDown)
	defer stuck.Stop()
	var got []string
	for len(got) < len(want) {
		req, shutdown := q.Get()
		if shutdown {
			t.Fatalf("nothing fed after %d of %d", len(got), len(want))
		}
		got = append(got, req.Name)
		q.Done(req)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("reconciles (-want +got):\n%s", diff)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.feeding || len(s.pending) > 0 {
		t.Errorf("the feeder is still running with %d held back", len(s.pending))
	}
}
