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
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// apiserverDown is how long R4 keeps the kube-apiserver stopped each cycle.
const apiserverDown = 20 * time.Second

// TestR4ControlPlaneOutage: the kube-apiserver is stopped for 20 s while TrainJobs are created
// (cfg.r4Cycles times), then etcd is restarted. I1-I4 hold; the manager's /readyz goes false and
// comes back; and it restarts at most once per outage (a leader that cannot renew its lease must
// exit; a crash loop would restart it again and again).
func TestR4ControlPlaneOutage(t *testing.T) {
	seed := cfg.seeds[0]
	jobs := plan(seed, cfg.r4Jobs)
	base := baseline(t, "r4-base", seed, jobs)
	ready := watchReadiness(t)
	r := runScenario(t, "r4", seed, jobs, disruption{restartCrashed: true, during: outages(cfg.r4Cycles)})
	transitions := ready.stop()
	vs, err := check(t.Context(), r, base)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := writeReport("r4", r, vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("R4: %d TrainJobs, %d apiserver outages of %s and an etcd restart; the manager restarted %d times, /readyz changed %d times %v; caught up %.1fs and finished %.1fs after the control plane was back; %d violations; report in %s",
		len(jobs), cfg.r4Cycles, apiserverDown, r.crashes, len(transitions), transitions, r.converged.Seconds(), r.finished.Seconds(), len(vs), dir)
	for _, v := range vs {
		t.Error(v)
	}
	// Each outage (the apiserver's, then etcd's) may cost one exit of the leader.
	if outages := cfg.r4Cycles + 1; r.crashes > outages {
		t.Errorf("the manager restarted %d times in %d outages: a crash loop", r.crashes, outages)
	}
	if len(transitions) < 2 || transitions[len(transitions)-1] != "ready" {
		t.Errorf("/readyz went %v; want it to go false during an outage and end ready", transitions)
	}
}

// outages stops the kube-apiserver for apiserverDown, cycles times, then restarts etcd; it
// returns when the control plane answers again.
func outages(cycles int) func(context.Context, *testing.T) time.Time {
	return func(ctx context.Context, t *testing.T) time.Time {
		for range cycles {
			if !pause(ctx, 2*time.Second) {
				return time.Now()
			}
			if err := cluster.Kill("kube-apiserver"); err != nil {
				t.Errorf("stopping the apiserver: %v", err)
				return time.Now()
			}
			pause(ctx, apiserverDown)
			if err := restartHealthy(ctx, "kube-apiserver"); err != nil {
				t.Errorf("%v", err)
				return time.Now()
			}
		}
		if err := cluster.Kill("etcd"); err != nil {
			t.Errorf("stopping etcd: %v", err)
			return time.Now()
		}
		for _, c := range []string{"etcd", "kube-apiserver"} {
			if err := restartHealthy(ctx, c); err != nil {
				t.Errorf("%v", err)
			}
		}
		// kwok v0.8.0 retries a failed pod stage only on connection refused, timeouts, 503 and
		// 429 (its shouldRetry). A patch cut by the etcd restart comes back as a 500 ("rpc error:
		// code = Unavailable desc = error reading from server: EOF"), one in flight when the
		// apiserver is killed as a broken connection; the stage is dropped and its pod never moves
		// again (a full run saw three pods stuck in Pending and Running). A kubelet resyncs its
		// pods; a fresh kwok, which lists them and plays their stages, stands in for that, once
		// the whole control plane is back.
		if err := cluster.Kill("kwok"); err != nil {
			t.Errorf("stopping kwok: %v", err)
		}
		if err := restartHealthy(ctx, "kwok"); err != nil {
			t.Errorf("%v", err)
		}
		return time.Now()
	}
}

// restartHealthy starts a component that does not run and waits until it is healthy.
func restartHealthy(ctx context.Context, name string) error {
	if err := cluster.Restart(name); err != nil {
		return fmt.Errorf("restarting %s: %w", name, err)
	}
	if err := cluster.WaitHealthy(ctx, name, 2*time.Minute); err != nil {
		return fmt.Errorf("%s after its restart: %w", name, err)
	}
	return nil
}

// pause waits d unless ctx ends first, and says whether it waited d: the scenario's schedule,
// not a synchronisation.
func pause(ctx context.Context, d time.Duration) bool {
	select {
	case <-time.After(d):
		return true
	case <-ctx.Done():
		return false
	}
}

// readiness records the changes of the manager's /readyz ("ready", "not ready").
type readiness struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	seen   []string
}

func watchReadiness(t *testing.T) *readiness {
	ctx, cancel := context.WithCancel(t.Context())
	r := &readiness{cancel: cancel}
	url := fmt.Sprintf("http://127.0.0.1:%d/readyz", cluster.Settings.Ports.GantryHealth)
	hc := &http.Client{Timeout: time.Second}
	r.wg.Go(func() {
		for pause(ctx, 100*time.Millisecond) {
			state := "not ready"
			if resp, err := hc.Get(url); err == nil {
				if resp.StatusCode == http.StatusOK {
					state = "ready"
				}
				_ = resp.Body.Close()
			}
			if len(r.seen) == 0 || r.seen[len(r.seen)-1] != state {
				r.seen = append(r.seen, state)
			}
		}
	})
	return r
}

// stop ends the watch and returns the states seen, in order, starting with the first.
func (r *readiness) stop() []string {
	r.cancel()
	r.wg.Wait()
	return r.seen
}
