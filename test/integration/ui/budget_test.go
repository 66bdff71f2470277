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

package ui

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gmeasure"

	"github.com/gantry-ml/gantry/test/util"
)

// The Jobs page with 1,000 TrainJobs: what it sends is checked (under 150 KiB compressed), how
// long the server takes is reported, not asserted: this machine's speed is not the code's.
var _ = ginkgo.Describe("the Jobs page with 1,000 TrainJobs", ginkgo.Ordered, func() {
	const jobs = 1000
	var ns string
	ginkgo.BeforeAll(func() {
		ns = util.NewNamespace(ctx, k8sClient, "budget")
		var wg sync.WaitGroup
		var next, failed atomic.Int32
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1); i <= jobs; i = next.Add(1) {
					if err := k8sClient.Create(ctx, trainJob(ns, fmt.Sprintf("job-%04d", i), "budget-absent-runtime")); err != nil {
						failed.Add(1)
					}
				}
			})
		}
		wg.Wait()
		gomega.Expect(failed.Load()).To(gomega.BeZero())
		gomega.Eventually(func() string { _, body := get("/jobs?ns=" + ns); return body }).Should(gomega.ContainSubstring("1–100 of 1,000"))
	})

	ginkgo.It("shows them 100 to a page, each exactly once, newest first, with links between pages", func() {
		seen := map[string]int{}
		for page := 1; page <= 10; page++ {
			code, body := get(fmt.Sprintf("/jobs?ns=%s&page=%d", ns, page))
			gomega.Expect(code).To(gomega.Equal(http.StatusOK))
			gomega.Expect(rowState.FindAllStringSubmatch(body, -1)).To(gomega.HaveLen(100), "page %d", page)
			for job := range states(body) {
				seen[job] = page
			}
			last := strconv.Itoa(page * 100)
			if page == 10 {
				last = "1,000"
			}
			gomega.Expect(body).To(gomega.ContainSubstring(fmt.Sprintf("%d–%s of 1,000", page*100-99, last)))
			gomega.Expect(strings.Contains(body, `rel="prev"`)).To(gomega.Equal(page > 1), "page %d's Previous link", page)
			gomega.Expect(strings.Contains(body, fmt.Sprintf(`href="/jobs?ns=%s&amp;page=%d"`, ns, page+1))).To(gomega.Equal(page < 10), "page %d's Next link", page)
		}
		gomega.Expect(seen).To(gomega.HaveLen(jobs))
		_, last := get(fmt.Sprintf("/jobs?ns=%s&page=99", ns))
		gomega.Expect(last).To(gomega.ContainSubstring("901–1,000 of 1,000"), "a page past the end shows the last")
		code, body := get(fmt.Sprintf("/jobs?ns=%s&page=zero", ns))
		gomega.Expect(code).To(gomega.Equal(http.StatusBadRequest))
		gomega.Expect(body).To(gomega.ContainSubstring(`page &#34;zero&#34;: want a whole number from 1`))
	})

	ginkgo.It("sends under 150 KiB and reports the server time", func() {
		exp := gmeasure.NewExperiment("Jobs page, 1,000 TrainJobs")
		ginkgo.AddReportEntry(exp.Name, exp)
		var sent, html int
		exp.Sample(func(int) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, server.URL+"/jobs?ns="+ns, nil)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			req.Header.Set("Accept-Encoding", "gzip")
			start := time.Now()
			resp, err := http.DefaultTransport.RoundTrip(req) // the raw, compressed response
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			raw, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			exp.RecordDuration("server", time.Since(start))
			gomega.Expect(resp.Header.Get("Content-Encoding")).To(gomega.Equal("gzip"))
			sent = len(raw)
			zr, err := gzip.NewReader(bytes.NewReader(raw))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			body, err := io.ReadAll(zr)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			html = len(body)
		}, gmeasure.SamplingConfig{N: 5})
		stats := exp.GetStats("server")
		ginkgo.GinkgoWriter.Printf("Jobs page, %d TrainJobs: %d bytes sent (%d of HTML), server time median %s, max %s\n",
			jobs, sent, html, stats.DurationFor(gmeasure.StatMedian), stats.DurationFor(gmeasure.StatMax))
		gomega.Expect(sent).To(gomega.BeNumerically("<", 150*1024))
	})
})
