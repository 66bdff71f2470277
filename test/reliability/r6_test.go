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
	"bufio"
	"crypto/tls"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gantry-ml/gantry/internal/faults"
)

// throttleQPS and throttleFor are R6's throttle: the manager's client at 2 requests a second for
// its first minute.
const (
	throttleQPS = 2
	throttleFor = 60 * time.Second
)

// TestR6ThrottledClient: the manager's API client is held to 2 QPS for its first 60 s while
// TrainJobs are created, then gets its limits back. I1-I4 hold and its work queues drain to 0.
func TestR6ThrottledClient(t *testing.T) {
	if cfg.mode == "quick" {
		t.Skip("R6 holds the manager at 2 QPS for a minute: make test-reliability runs it")
	}
	seed := cfg.seeds[0]
	jobs := plan(seed, cfg.r6Jobs)
	base := baseline(t, "r6-base", seed, jobs)
	setFault(t, faults.ThrottleClient(throttleQPS, throttleFor))
	throttled := time.Now()
	r := runScenario(t, "r6", seed, jobs, disruption{restartCrashed: true})
	finished := time.Since(throttled)
	vs, err := check(t.Context(), r, base)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := writeReport("r6", r, vs)
	if err != nil {
		t.Fatal(err)
	}
	depths, drained := waitQueuesDrained(t, time.Minute)
	t.Logf("R6: %d TrainJobs, the client at %d QPS for %s; every TrainJob had finished %.0fs after the throttle began; work queues %v; %d violations; report in %s",
		len(jobs), throttleQPS, throttleFor, finished.Seconds(), depths, len(vs), dir)
	for _, v := range vs {
		t.Error(v)
	}
	if r.crashes > 0 {
		t.Errorf("the manager exited %d times while throttled; a slow client must not end it", r.crashes)
	}
	if !drained {
		t.Errorf("the work queues did not drain to 0: %v", depths)
	}
}

// waitQueuesDrained polls the manager's workqueue_depth metrics until every queue is empty.
func waitQueuesDrained(t *testing.T, within time.Duration) (map[string]float64, bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		depths, err := queueDepths()
		if err == nil && len(depths) > 0 && allZero(depths) {
			return depths, true
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Errorf("reading the manager's metrics: %v", err)
			}
			return depths, false
		}
		pause(t.Context(), 500*time.Millisecond)
	}
}

func allZero(m map[string]float64) bool {
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// queueDepths scrapes workqueue_depth by queue name from the manager's metrics endpoint (HTTPS
// with a self-signed certificate, authorized by the cluster administrator's token).
func queueDepths() (map[string]float64, error) {
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("https://127.0.0.1:%d/metrics", cluster.Settings.Ports.GantryMetrics), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+restConfig.BearerToken)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a test cluster's self-signed metrics certificate
	}}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET /metrics: %s", resp.Status)
	}
	depths := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "workqueue_depth{") {
			continue
		}
		labels, value, _ := strings.Cut(strings.TrimPrefix(line, "workqueue_depth"), " ")
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			return nil, fmt.Errorf("metric line %q: %w", line, err)
		}
		depths[labels] = v
	}
	return depths, sc.Err()
}
