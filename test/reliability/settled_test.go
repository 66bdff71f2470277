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

package reliability

import (
	"context"
	"slices"
	"testing"
	"time"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/faults"
)

// TestI5QuietWhenSettled: with at least cfg.i5Jobs TrainJobs settled (those the scenarios before
// left, topped up), a freshly started manager, which lists and reconciles every one of them, makes no write
// in 60 s: no status patch, apply, create or delete of anything the audit policy records.
func TestI5QuietWhenSettled(t *testing.T) {
	ctx := t.Context()
	seed := cfg.seeds[0]
	// Earlier tests may leave TrainJobs still running (R5's last one, created after the outage).
	total := waitAllSettled(t, 5*time.Minute)
	// The scenarios before this one (this file sorts last) leave their TrainJobs: top them up.
	if n := cfg.i5Jobs - len(total.Items); n > 0 {
		runScenario(t, "i5", seed, plan(seed, n), disruption{})
		total = waitAllSettled(t, 5*time.Minute)
	}
	// And the manager has done what finishing asks of it (its finalizers on finished JobSets).
	if depths, drained := waitQueuesDrained(t, time.Minute); !drained {
		t.Fatalf("the manager's work queues did not drain: %v", depths)
	}
	// A start resyncs every object: the likeliest moment for a needless write.
	events := writesAfter(t, cfg.quiet, func() {
		if err := cluster.Kill(manager); err != nil {
			t.Fatal(err)
		}
		if err := deleteLease(ctx); err != nil {
			t.Fatal(err)
		}
		if err := restartHealthy(ctx, manager); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("I5: %d settled TrainJobs, %d writes in the %s after the manager started and took the lease", len(total.Items), len(events), cfg.quiet)
	for i, e := range events {
		if i == 10 {
			t.Errorf("... and %d more", len(events)-i)
			break
		}
		t.Errorf("I5: a write with nothing to change: %s", e)
	}

	// The guard: a manager that patches unchanged statuses must be caught.
	guard := writesAfter(t, 20*time.Second, func() { setFault(t, faults.WriteUnchangedStatus) })
	t.Logf("I5 guard (%s): %d writes in 20 s", faults.WriteUnchangedStatus, len(guard))
	if len(guard) == 0 {
		t.Errorf("I5 did not catch a manager that patches unchanged statuses")
	}
}

// waitAllSettled waits until every TrainJob of the cluster has finished, and returns them.
func waitAllSettled(t *testing.T, within time.Duration) *trainer.TrainJobList {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		list := &trainer.TrainJobList{}
		if err := k8sClient.List(t.Context(), list); err != nil {
			t.Fatal(err)
		}
		running := 0
		for i := range list.Items {
			if terminal(list.Items[i].Status.Conditions) == "" {
				running++
			}
		}
		if running == 0 {
			return list
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d TrainJobs still unfinished after %s", running, len(list.Items), within)
		}
		pause(t.Context(), 500*time.Millisecond)
	}
}

// writesAfter runs start (which starts a manager), waits until a manager leads, and returns the
// reconcile writes of the window that follows.
func writesAfter(t *testing.T, window time.Duration, start func()) []auditEvent {
	t.Helper()
	from := auditSize()
	start()
	if err := waitLeader(t.Context(), time.Minute); err != nil {
		t.Fatal(err)
	}
	pause(t.Context(), window)
	all, err := readAudit(from, "")
	if err != nil {
		t.Fatal(err)
	}
	return reconcileWrites(all)
}

// reconcileWrites keeps the writes of TrainJobs and what Gantry creates for them; the manager's
// own objects (its lease, its certificate) have their own rhythm.
func reconcileWrites(events []auditEvent) []auditEvent {
	var out []auditEvent
	for _, e := range events {
		if slices.Contains(writeVerbs, e.Verb) && e.ObjectRef.Namespace != leaseNamespace &&
			(e.ObjectRef.Resource == "trainjobs" || slices.Contains(childResources, e.ObjectRef.Resource)) {
			out = append(out, e)
		}
	}
	return out
}

// waitLeader waits until a manager holds the leader election lease: its controllers run.
func waitLeader(ctx context.Context, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		if h, err := leaseHolder(ctx); err == nil && h != "" {
			return nil
		}
		if time.Now().After(deadline) {
			return context.DeadlineExceeded
		}
		pause(ctx, 100*time.Millisecond)
	}
}
