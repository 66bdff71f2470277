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

package statusserver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/config"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/integration/framework"
)

// TestReportThroughput (heavy form only) posts the reports of 250 TrainJobs, each every 5 s as the
// SDK does, for 30 s through the server into an envtest apiserver, once with Kubeflow Trainer's
// status client limits (5/s, burst 10) and once with Gantry's defaults (50/s, burst 100), and
// checks that the defaults take them all, each within a second.
//
//	GANTRY_STATUSSERVER_LOAD=full go test ./internal/statusserver -run TestReportThroughput -v -timeout 10m
func TestReportThroughput(t *testing.T) {
	if os.Getenv(loadEnv) != "full" {
		t.Skip("the heavy form: GANTRY_STATUSSERVER_LOAD=full")
	}
	raiseFileLimit(t, 4000)
	ctrllog.SetLogger(logr.Discard())
	env := &framework.Framework{}
	if err := env.Start(t.Context()); err != nil {
		t.Skip(err) // no envtest binaries here
	}
	t.Cleanup(func() { _ = env.Stop() })
	ctx := t.Context()
	const jobs = 250
	if err := env.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "load"}}); err != nil {
		t.Fatal(err)
	}
	for i := range jobs {
		if err := env.Client.Create(ctx, utiltesting.MakeTrainJobWrapper("load", fmt.Sprintf("job-%d", i)).Obj()); err != nil {
			t.Fatal(err)
		}
	}
	// Tokens are checked against the TrainJobs in a cache, as the manager's.
	tjCache, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = tjCache.Start(ctx) }()
	if !tjCache.WaitForCacheSync(ctx) {
		t.Fatal("the cache did not sync")
	}

	for _, limits := range []struct {
		name  string
		qps   float32
		burst int32
	}{{"Kubeflow Trainer's 5/s, burst 10", 5, 10}, {"Gantry's 50/s, burst 100", configapi.DefaultStatusServerQPS, configapi.DefaultStatusServerBurst}} {
		cfg := &configapi.Configuration{StatusServer: &configapi.StatusServer{QPS: &limits.qps, Burst: &limits.burst}}
		configapi.SetDefaults(cfg)
		rc := config.StatusServerRESTConfig(cfg, env.Config)
		c, err := client.New(rc, client.Options{Scheme: env.Scheme})
		if err != nil {
			t.Fatal(err)
		}
		ts := startTestServer(t, Options{Verifier: staticVerifier("valid"), Applier: &ClientApplier{Client: c, Reader: tjCache},
			QPS: rc.QPS, Burst: rc.Burst})
		rs := reportFor(ctx, ts, jobs, 5*time.Second, 30*time.Second)
		ok := slices.DeleteFunc(slices.Clone(rs), func(r result) bool { return r.err != nil || r.code != http.StatusOK })
		lat := make([]time.Duration, 0, len(ok))
		for _, r := range ok {
			lat = append(lat, r.latency)
		}
		slices.Sort(lat)
		p := func(q float64) time.Duration {
			if len(lat) == 0 {
				return 0
			}
			return lat[int(q*float64(len(lat)-1))].Round(time.Millisecond)
		}
		t.Logf("%s: %s; written %.1f/s; 200s in median %v, p99 %v", limits.name, summarize(rs), float64(len(ok))/30, p(0.5), p(0.99))
		if limits.qps == configapi.DefaultStatusServerQPS && (len(ok) != len(rs) || p(0.99) > time.Second) {
			t.Errorf("with the defaults, %d of %d reports succeeded, p99 %v; want all, within 1s", len(ok), len(rs), p(0.99))
		}
	}
}

// reportFor has n reporters, one per TrainJob load/job-<i>, each on its own keep-alive
// connection, post every interval (from a random start) for d.
func reportFor(ctx context.Context, ts *testServer, n int, every, d time.Duration) []result {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var mu sync.Mutex
	var out []result
	var wg sync.WaitGroup
	for i := range n {
		c := ts.client(fmt.Sprintf("127.0.6.%d", 1+i%20))
		wg.Go(func() {
			defer c.CloseIdleConnections()
			next := time.Now().Add(rand.N(every)) //nolint:gosec // a spread, not a secret
			for {
				select {
				case <-ctx.Done():
					return
				case <-time.After(time.Until(next)):
				}
				next = next.Add(every)
				start := time.Now()
				code, err := postReport(context.WithoutCancel(ctx), ts, c, "load", fmt.Sprintf("job-%d", i))
				mu.Lock()
				out = append(out, result{code: code, err: err, latency: time.Since(start)})
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	return out
}

// postReport posts a valid report for namespace/name.
func postReport(ctx context.Context, ts *testServer, c *http.Client, namespace, name string) (int, error) {
	return ts.post(ctx, c, "/apis/trainer.kubeflow.org/v1alpha1/namespaces/"+namespace+"/trainjobs/"+name+"/status", "valid",
		fmt.Sprintf(`{"trainerStatus":{"progressPercentage":%d,"lastUpdatedTime":%q}}`, rand.N(101), //nolint:gosec // any progress
			time.Now().UTC().Format(time.RFC3339)))
}
