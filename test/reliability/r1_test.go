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

	"github.com/gantry-ml/gantry/internal/faults"
)

// baseline runs the jobs without faults and returns the final summaries I4 compares with.
func baseline(t *testing.T, name string, seed int64, specs []jobSpec) map[string]summary {
	t.Helper()
	r := runScenario(t, name, seed, specs, disruption{})
	vs, err := check(t.Context(), r, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vs {
		t.Errorf("without faults: %s", v)
	}
	jobs, err := finalState(t.Context(), r.ns)
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]summary, len(jobs))
	for name, tj := range jobs {
		out[name] = summarize(tj)
	}
	return out
}

// TestR1KillChaos: SIGKILL the manager every 3-7 s (seeded) and restart it at once while
// TrainJobs are created; I1-I4 hold and every TrainJob finishes soon after the last kill.
func TestR1KillChaos(t *testing.T) {
	for _, seed := range cfg.seeds {
		base := baseline(t, "r1-base", seed, plan(seed, cfg.jobs))
		r := runScenario(t, "r1", seed, plan(seed, cfg.jobs), disruption{killEvery: true})
		vs, err := check(t.Context(), r, base)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := writeReport("r1", r, vs)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("R1 seed %d: %d TrainJobs, %d kills, the manager caught up %.1fs and every TrainJob had finished %.1fs after the last kill, %d violations; report in %s",
			seed, cfg.jobs, r.kills, r.converged.Seconds(), r.finished.Seconds(), len(vs), dir)
		for _, v := range vs {
			t.Errorf("seed %d: %s", seed, v)
		}
		if r.converged > cfg.converge {
			t.Errorf("seed %d: the manager caught up %.1fs after the last kill, more than %s", seed, r.converged.Seconds(), cfg.converge)
		}
	}
}

// TestR1RegressionGuard proves R1 can fail: with the JobSet create made non-idempotent on
// purpose (faults.RecreateJobSets), the same chaos must break I1 or I2 for every seed.
func TestR1RegressionGuard(t *testing.T) {
	setFault(t, faults.RecreateJobSets)
	for _, seed := range cfg.seeds {
		r := runScenario(t, "r1-guard", seed, plan(seed, cfg.jobs), disruption{killEvery: true})
		vs, err := check(t.Context(), r, nil)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := writeReport("r1-guard", r, vs)
		if err != nil {
			t.Fatal(err)
		}
		caught := slices.ContainsFunc(vs, func(v violation) bool { return v.invariant == "I1" || v.invariant == "I2" })
		t.Logf("R1 guard seed %d: %d kills, %d violations (caught on I1/I2: %v); report in %s", seed, r.kills, len(vs), caught, dir)
		if !caught {
			t.Errorf("seed %d: the injected non-idempotent JobSet create broke neither I1 nor I2", seed)
		}
	}
}

// setFault restarts the manager with a fault injected, and without it when the test ends.
func setFault(t *testing.T, fault string) {
	t.Helper()
	restart := func(env []string) {
		cluster.ManagerEnv = env
		if err := cluster.Kill(manager); err != nil {
			t.Fatal(err)
		}
		// Not the point here: the lease of a killed leader would hold the next one up to 15 s.
		if err := deleteLease(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := cluster.Restart(manager); err != nil {
			t.Fatal(err)
		}
		if err := cluster.WaitHealthy(context.Background(), manager, 2*time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	restart([]string{faults.EnvVar + "=" + fault})
	t.Cleanup(func() { restart(nil) })
}
