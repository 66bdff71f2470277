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

package cli

import (
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gmeasure"
	"k8s.io/client-go/rest"

	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/test/util"
)

// countingTransport counts the requests a command makes, and which.
type countingTransport struct {
	next  http.RoundTripper
	mu    sync.Mutex
	paths []string
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.mu.Lock()
	c.paths = append(c.paths, r.Method+" "+r.URL.Path)
	c.mu.Unlock()
	return c.next.RoundTrip(r)
}

const scaleJobs = 1000

// `gantry list -A` over 1,000 TrainJobs: the requests are counted (at most 3: TrainJobs, the
// ClusterTrainingRuntimes their defaults come from, Kueue's Workloads for the queued ones) and
// the time is reported, not asserted: this machine's speed is not the code's.
var _ = ginkgo.Describe("list -A with 1,000 TrainJobs", ginkgo.Ordered, func() {
	var ns string
	ginkgo.BeforeAll(func() {
		ns = util.NewNamespace(ctx, k8sClient, "scale")
		var wg sync.WaitGroup
		var failed atomic.Int32
		next := atomic.Int32{}
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1); i <= scaleJobs; i = next.Add(1) {
					f := fixtureJob{name: fmt.Sprintf("job-%04d", i), runtime: "torch-cli", labels: map[string]string{"scale": "yes"}}
					if i%10 == 0 {
						f.labels["kueue.x-k8s.io/queue-name"], f.suspend = "q", true
					}
					if err := k8sClient.Create(ctx, f.object(ns)); err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		gomega.Expect(failed.Load()).To(gomega.BeZero())
	})

	ginkgo.It("makes at most 3 API requests", func() {
		counter := &countingTransport{}
		r := gantryWith(ctx, nil, func(o *cli.Options) {
			o.ConfigFlags.WrapConfigFn = func(c *rest.Config) *rest.Config {
				c.Wrap(func(rt http.RoundTripper) http.RoundTripper { counter.next = rt; return counter })
				return c
			}
		}, "list", "-A", "-l", "scale=yes", "--no-headers")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(lines(r.Stdout)).To(gomega.HaveLen(scaleJobs))
		ginkgo.GinkgoWriter.Printf("requests of list -A: %v\n", counter.paths)
		gomega.Expect(counter.paths).To(gomega.ConsistOf(
			"GET /apis/trainer.kubeflow.org/v1alpha1/trainjobs",
			"GET /apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes",
			"GET /apis/kueue.x-k8s.io/v1beta2/workloads",
		))
	})

	ginkgo.It("reports how long it takes", func() {
		exp := gmeasure.NewExperiment("gantry list -A, 1,000 TrainJobs")
		ginkgo.AddReportEntry(exp.Name, exp)
		exp.Sample(func(int) {
			exp.MeasureDuration("list", func() {
				r := gantry("list", "-A", "-l", "scale=yes")
				gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
			})
		}, gmeasure.SamplingConfig{N: 5, Duration: time.Minute})
		stats := exp.GetStats("list")
		ginkgo.GinkgoWriter.Printf("gantry list -A with %d TrainJobs: median %s, max %s\n", scaleJobs,
			stats.DurationFor(gmeasure.StatMedian), stats.DurationFor(gmeasure.StatMax))
	})
})
