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
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/localcluster"
)

// Takeover targets: after SIGKILL the lease must expire (15 s after the other replica last saw it
// renewed) and that replica's next try takes it; after SIGTERM the leader releases it and the
// next try takes it. client-go spaces a candidate's tries 1 to 2.2 s apart (Gantry's 1 s retry
// period, jitter factor 1.2), and both the last sighting and the next try fall somewhere in such
// a gap, so one takeover may exceed a target by up to jitterSlack; their median may not.
const (
	takeoverAfterKill = 17 * time.Second
	takeoverAfterTerm = 3 * time.Second
	jitterSlack       = 2400 * time.Millisecond
	// r3Rate is R3's load: 200 TrainJobs a minute.
	r3Rate = 200.0 / 60
)

var replicas = []string{manager, localcluster.ManagerReplica}

// TestR3LeaderFailover: two manager replicas; each cycle SIGKILLs the leader, then SIGTERMs the
// new one, restarting each at once, while TrainJobs arrive at 200 a minute. The other replica
// takes over within 17 s of a SIGKILL and 3 s of a SIGTERM; no two processes ever write in
// turns (the audit log's user agents); I1-I4 hold.
func TestR3LeaderFailover(t *testing.T) {
	seed := cfg.seeds[0]
	jobs := plan(seed, cfg.r3Jobs)
	base := baseline(t, "r3-base", seed, jobs)
	if err := cluster.StartManagerReplica(t.Context(), true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Terminate(localcluster.ManagerReplica, 30*time.Second) })
	var kills, terms []time.Duration
	r := runScenario(t, "r3", seed, jobs, disruption{rate: r3Rate, during: func(ctx context.Context, t *testing.T) time.Time {
		for range cfg.r3Cycles {
			for _, graceful := range []bool{false, true} {
				d, err := failover(ctx, graceful)
				if err != nil {
					t.Error(err)
					return time.Now()
				}
				if graceful {
					terms = append(terms, d)
				} else {
					kills = append(kills, d)
				}
			}
		}
		return time.Now()
	}})
	vs, err := check(t.Context(), r, base)
	if err != nil {
		t.Fatal(err)
	}
	events, err := readAudit(r.auditFrom, r.ns)
	if err != nil {
		t.Fatal(err)
	}
	vs = append(vs, checkOneWriter(events)...)
	dir, err := writeReport("r3", r, vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("R3: %d TrainJobs at 200/min, %d cycles; takeover after SIGKILL %s, after SIGTERM %s; %d violations; report in %s",
		len(jobs), cfg.r3Cycles, seconds(kills), seconds(terms), len(vs), dir)
	for _, v := range vs {
		t.Error(v)
	}
	checkTakeovers(t, "SIGKILL", kills, takeoverAfterKill)
	checkTakeovers(t, "SIGTERM", terms, takeoverAfterTerm)
}

// checkTakeovers holds each takeover to target plus the retry's jitter, and their median, when
// there are three or more, to target.
func checkTakeovers(t *testing.T, signal string, ds []time.Duration, target time.Duration) {
	t.Helper()
	for _, d := range ds {
		if d > target+jitterSlack {
			t.Errorf("a takeover after %s took %s, more than %s plus the retry's jitter (%s)", signal, d, target, jitterSlack)
		}
	}
	if len(ds) >= 3 {
		sorted := slices.Sorted(slices.Values(ds))
		if m := sorted[len(sorted)/2]; m > target {
			t.Errorf("the median takeover after %s took %s, more than %s", signal, m, target)
		}
	}
}

// TestR3RegressionGuard proves the one-writer check can fail: a second replica without leader
// election reconciles beside the leader, and the audit log must show it.
func TestR3RegressionGuard(t *testing.T) {
	seed := cfg.seeds[0]
	if err := cluster.StartManagerReplica(t.Context(), false); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cluster.Terminate(localcluster.ManagerReplica, 30*time.Second) })
	r := runScenario(t, "r3-guard", seed, plan(seed, cfg.r3Jobs/2), disruption{rate: r3Rate})
	events, err := readAudit(r.auditFrom, r.ns)
	if err != nil {
		t.Fatal(err)
	}
	vs := checkOneWriter(events)
	dir, err := writeReport("r3-guard", r, vs)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("R3 guard (two replicas without leader election): %d one-writer violations; report in %s", len(vs), dir)
	if len(vs) == 0 {
		t.Errorf("two managers writing at once went unnoticed")
	}
}

// failover stops the leading replica (SIGTERM when graceful, else SIGKILL), returns how long
// until the other one held the lease, and restarts the stopped one as a kubelet would.
func failover(ctx context.Context, graceful bool) (time.Duration, error) {
	leader, err := leadingReplica(ctx)
	if err != nil {
		return 0, err
	}
	old, err := leaseHolder(ctx)
	if err != nil {
		return 0, err
	}
	stopped := make(chan error, 1)
	go func() {
		if graceful {
			stopped <- cluster.Terminate(leader, 30*time.Second)
		} else {
			stopped <- cluster.Kill(leader)
		}
	}()
	took, err := waitNewHolder(ctx, old, 60*time.Second)
	if err := <-stopped; err != nil {
		return 0, fmt.Errorf("stopping %s: %w", leader, err)
	}
	if err != nil {
		return 0, fmt.Errorf("after stopping %s (graceful %v): %w", leader, graceful, err)
	}
	if err := restartHealthy(ctx, leader); err != nil {
		return 0, err
	}
	return took, nil
}

// acquiredRE is the line client-go's leader election logs when a process takes the lease; klog's
// header carries the process ID.
var acquiredRE = regexp.MustCompile(`^I\d{4} [\d:.]+\s+(\d+) leaderelection\.go:\d+\] "Successfully acquired lease"`)

// leadingReplica is the replica whose running process last logged that it acquired the lease
// and whose lease is current.
func leadingReplica(ctx context.Context) (string, error) {
	deadline := time.Now().Add(time.Minute)
	for {
		for _, name := range replicas {
			pid := cluster.PID(name)
			if pid != 0 && slices.Contains(acquiredBy(name), pid) {
				return name, nil
			}
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("no replica logged that it leads")
		}
		pause(ctx, 200*time.Millisecond)
	}
}

// acquiredBy lists the process IDs that logged acquiring the lease in a component's log.
func acquiredBy(name string) []int {
	var pids []int
	for line := range strings.SplitSeq(cluster.LogTail(name, 5000), "\n") {
		if m := acquiredRE.FindStringSubmatch(line); m != nil {
			pid, _ := strconv.Atoi(m[1])
			pids = append(pids, pid)
		}
	}
	return pids
}

func leaseHolder(ctx context.Context) (string, error) {
	lease := &coordinationv1.Lease{}
	if err := k8sClient.Get(ctx, client.ObjectKey{Namespace: leaseNamespace, Name: leaseName}, lease); err != nil {
		return "", err
	}
	return ptr.Deref(lease.Spec.HolderIdentity, ""), nil
}

// waitNewHolder polls the lease until a holder other than old (and not "", a released lease)
// holds it, and says how long that took.
func waitNewHolder(ctx context.Context, old string, within time.Duration) (time.Duration, error) {
	start := time.Now()
	for {
		h, err := leaseHolder(ctx)
		if err == nil && h != "" && h != old {
			return time.Since(start), nil
		}
		if time.Since(start) > within {
			if err != nil {
				return 0, fmt.Errorf("no other replica took the lease within %s: %w", within, err)
			}
			return 0, fmt.Errorf("no other replica took the lease within %s (holder %q)", within, h)
		}
		pause(ctx, 50*time.Millisecond)
	}
}

// checkOneWriter: the managers' writes, in time order, come from one process at a time; a process
// that another has followed never writes again.
func checkOneWriter(events []auditEvent) []violation {
	var vs []violation
	done := map[string]bool{}
	current := ""
	for i := range events {
		e := &events[i]
		if !strings.HasPrefix(e.UserAgent, "gantry-manager/") || !slices.Contains(writeVerbs, e.Verb) {
			continue
		}
		if e.UserAgent == current {
			continue
		}
		if done[e.UserAgent] {
			vs = append(vs, violation{invariant: "one writer", detail: fmt.Sprintf("%q wrote again after %q had taken over", e.UserAgent, current), first: e})
		}
		if current != "" {
			done[current] = true
		}
		current = e.UserAgent
	}
	return vs
}

func seconds(ds []time.Duration) string {
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1fs", d.Seconds())
	}
	return "[" + strings.Join(parts, " ") + "]"
}
