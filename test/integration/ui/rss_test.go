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
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/util"
)

// The UI's memory, measured on the process the chart runs (gantry-ui): 1,000 TrainJobs with 500
// points of progress and three metrics each, loaded from their history ConfigMaps
// (--history=configmap) as a restarted UI loads them, then the Jobs page and one job's curves
// served. The budget is 80 MiB of RSS, mapped code included.
var _ = ginkgo.Describe("gantry-ui's memory with 1,000 jobs x 500 points", ginkgo.Label("budget"), func() {
	ginkgo.It("stays under 80 MiB of RSS", func() {
		const jobs, points = 1000, 500
		ns := util.NewNamespace(ctx, k8sClient, "rss")
		var wg sync.WaitGroup
		var next, failed atomic.Int32
		for range 8 {
			wg.Go(func() {
				for i := next.Add(1); i <= jobs; i = next.Add(1) {
					if err := historyFixture(ns, fmt.Sprintf("job-%04d", i), points); err != nil {
						failed.Add(1)
						ginkgo.GinkgoWriter.Println(err)
					}
				}
			})
		}
		wg.Wait()
		gomega.Expect(failed.Load()).To(gomega.BeZero())

		dir := ginkgo.GinkgoT().TempDir()
		bin, err := util.BuildCmd(dir, "gantry-ui")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		kubeconfig, err := fwk.WriteKubeconfig(dir)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		cmd, line := util.StartFirstLine(bin, "--kubeconfig", kubeconfig, "--address", "127.0.0.1:0", "--history", "configmap")
		link := strings.TrimSpace(strings.TrimPrefix(line, "Gantry UI: "))

		// Open the Jobs page and one job's curves, as a user would, before measuring.
		jar, err := cookiejar.New(nil)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		browser := &http.Client{Jar: jar}
		for _, u := range []string{link, strings.Replace(link, "/jobs?", "/jobs/"+ns+"/job-0001?tab=progress&", 1)} {
			resp, err := browser.Get(u) //nolint:noctx // the UI's own link on loopback
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_ = resp.Body.Close()
			gomega.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK))
		}
		rss := func() float64 {
			data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			for l := range strings.SplitSeq(string(data), "\n") {
				if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
					kb, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
					gomega.Expect(err).NotTo(gomega.HaveOccurred())
					return float64(kb) / 1024
				}
			}
			ginkgo.Fail("no VmRSS")
			return 0
		}
		// The history was restored before the link was printed; sample the RSS for 3 s.
		var peak float64
		gomega.Consistently(func() float64 { peak = max(peak, rss()); return peak }, "3s", "100ms").
			Should(gomega.BeNumerically(">", 0))
		gomega.Expect(running(cmd.Process.Pid)).To(gomega.BeTrue(), "the UI is still running")
		ginkgo.GinkgoWriter.Printf("gantry-ui with %d TrainJobs x %d points: RSS %.1f MiB (peak of 3 s)\n", jobs, points, peak)
		gomega.Expect(peak).To(gomega.BeNumerically("<=", rssBudgetMiB), "gantry-ui's RSS in MiB")
	})
})

// rssBudgetMiB is the UI's memory budget (docs/ui.md).
const rssBudgetMiB = 80

// historyFixture creates a TrainJob and its history ConfigMap of n points, as a UI with
// --history=configmap leaves them.
func historyFixture(ns, name string, n int) error {
	tj := trainJob(ns, name, "rss-absent-runtime")
	if err := k8sClient.Create(ctx, tj); err != nil {
		return err
	}
	h := ui.NewHistory(ui.DefaultHistoryPoints)
	base := time.Now().Add(-time.Duration(n) * time.Second)
	for i := range n {
		tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To(int32(i * 100 / n)),
			Metrics: []trainer.Metric{{Name: "loss", Value: strconv.FormatFloat(2/float64(i+1), 'g', 6, 64)},
				{Name: "accuracy", Value: strconv.FormatFloat(float64(i)/float64(n), 'g', 6, 64)}, {Name: "lr", Value: "1e-4"}},
			LastUpdatedTime: metav1.NewTime(base.Add(time.Duration(i) * time.Second))}
		h.Observe(tj)
	}
	data, err := h.Encode(tj.UID)
	if err != nil {
		return err
	}
	return k8sClient.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name + "-progress", Labels: map[string]string{ui.HistoryLabel: "true"},
			OwnerReferences: []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
				Name: name, UID: tj.UID, Controller: ptr.To(true)}}},
		BinaryData: map[string][]byte{"history.json.gz": data},
	})
}

// running reports whether the process still runs.
func running(pid int) bool {
	_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
	return err == nil
}
