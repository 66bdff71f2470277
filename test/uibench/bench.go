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

package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// options are one run's settings.
type options struct {
	// duration is how long the writer reports; every interval it reports names new metrics.
	duration, interval time.Duration
	names              int
	// limit is the RSS the UI's peak must stay under.
	limit int64
	// uiBin is the gantry-ui to measure (built from the checkout when empty) and uiArgs its
	// extra flags.
	uiBin  string
	uiArgs []string
	// watch keeps the job's Progress tab open, as a user would: its live stream renders the
	// curves after every report.
	watch bool
	dir   string
	log   io.Writer
}

// result is what a run measured.
type result struct {
	Command      string           `json:"command"`
	Date         string           `json:"date"`
	Commit       string           `json:"commit"`
	Duration     string           `json:"duration"`
	Reports      int              `json:"reports"`
	NamesPerRep  int              `json:"namesPerReport"`
	Watched      bool             `json:"watched"`
	PeakRSS      int64            `json:"peakRSSBytes"`
	FinalRSS     int64            `json:"finalRSSBytes"`
	StartRSS     int64            `json:"startRSSBytes"`
	LimitRSS     int64            `json:"limitRSSBytes"`
	Samples      []sample         `json:"samples"`
	UIMetrics    map[string]int64 `json:"uiMetrics,omitempty"`
	StreamEvents int              `json:"streamEvents"`
}

type sample struct {
	Seconds float64 `json:"s"`
	RSS     int64   `json:"rss"`
}

const mib = 1 << 20

// run starts an envtest API server, a TrainJob and gantry-ui, then reports o.names new metric
// names every o.interval for o.duration while it samples the UI's RSS.
func run(ctx context.Context, o options) (*result, error) {
	fwk := &framework.Framework{}
	if err := fwk.Start(ctx); err != nil {
		return nil, err
	}
	defer func() { _ = fwk.Stop() }()
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "bench", Name: "spammer"},
		Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "absent"}}}
	if err := fwk.Client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: tj.Namespace}}); err != nil {
		return nil, err
	}
	if err := fwk.Client.Create(ctx, tj); err != nil {
		return nil, err
	}
	kubeconfig, err := fwk.WriteKubeconfig(o.dir)
	if err != nil {
		return nil, err
	}
	if o.uiBin == "" {
		if o.uiBin, err = util.BuildCmd(o.dir, "gantry-ui"); err != nil {
			return nil, err
		}
	}
	ui, link, err := startUI(o, kubeconfig)
	if err != nil {
		return nil, err
	}
	defer ui.stop()
	browser, err := signIn(ctx, link)
	if err != nil {
		return nil, err
	}
	base, _, _ := strings.Cut(link, "/jobs?")
	res := &result{Date: time.Now().UTC().Format(time.RFC3339), Commit: commit(), Duration: o.duration.String(),
		NamesPerRep: o.names, Watched: o.watch, LimitRSS: o.limit}
	res.StartRSS, _ = rss(ui.pid(), "VmRSS")

	runCtx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var wg sync.WaitGroup
	if o.watch {
		wg.Go(func() { res.StreamEvents = watch(runCtx, browser, base+"/live/jobs/bench/spammer?tab=progress") })
	}
	samples := make(chan []sample, 1)
	go func() { samples <- sampleRSS(runCtx, ui.pid()) }()
	res.Reports, err = spam(runCtx, fwk.Client, tj, o)
	wg.Wait()
	res.Samples = <-samples
	if err != nil {
		return res, err
	}
	hwm, err := rss(ui.pid(), "VmHWM")
	if err != nil {
		return res, err
	}
	res.FinalRSS, _ = rss(ui.pid(), "VmRSS")
	res.PeakRSS = hwm
	res.UIMetrics = scrape(ctx, browser, base+"/metrics")
	return res, nil
}

// uiProcess is the gantry-ui the run started.
type uiProcess struct {
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *uiProcess) pid() int { return p.cmd.Process.Pid }

// stop ends the UI with SIGTERM, as the kubelet would, and kills it if it lingers.
func (p *uiProcess) stop() {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// startUI starts gantry-ui in kubeconfig mode and returns it and its login link.
func startUI(o options, kubeconfig string) (*uiProcess, string, error) {
	args := append([]string{"--kubeconfig", kubeconfig, "--address", "127.0.0.1:0"}, o.uiArgs...)
	cmd := exec.Command(o.uiBin, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = o.log
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	p := &uiProcess{cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.done) }()
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		p.stop()
		return nil, "", fmt.Errorf("%s printed no login link: %w", o.uiBin, err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	return p, strings.TrimSpace(strings.TrimPrefix(line, "Gantry UI: ")), nil
}

// signIn opens the login link and returns a client holding the session, as a browser would.
func signIn(ctx context.Context, link string) (*http.Client, error) {
	jar, err := cookiejar.New(nil)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Jar: jar}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, link, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("the login link answered %s", resp.Status)
	}
	return c, nil
}

// spam reports o.names metrics, each named anew (64 characters, the API's longest), every
// o.interval until ctx ends; it returns how many reports it made.
func spam(ctx context.Context, c client.Client, tj *trainer.TrainJob, o options) (int, error) {
	tick := time.NewTicker(o.interval)
	defer tick.Stop()
	start := time.Now().Truncate(time.Second)
	for n := 0; ; n++ {
		prev := tj.DeepCopy()
		ts := &trainer.TrainJobTrainerStatus{LastUpdatedTime: metav1.NewTime(start.Add(time.Duration(n) * time.Second))}
		for i := range o.names {
			name := fmt.Sprintf("r%06d-m%03d-", n, i)
			ts.Metrics = append(ts.Metrics, trainer.Metric{Name: name + strings.Repeat("x", 64-len(name)), Value: strconv.FormatFloat(float64(n*i)/7, 'g', -1, 64)})
		}
		tj.Status.TrainerStatus = ts
		if err := patchStatus(ctx, c, tj, prev, o.interval); err != nil {
			return n, fmt.Errorf("report %d: %w", n, err)
		}
		select {
		case <-ctx.Done():
			return n + 1, nil
		case <-tick.C:
		}
	}
}

// patchStatus makes one report started inside the window, even as the window ends: the client's
// rate limiter refuses a wait that would pass the context's deadline ("would exceed context
// deadline") before the context is done, which ended CI's 20 s run with an error at report 20.
func patchStatus(ctx context.Context, c client.Client, tj, prev *trainer.TrainJob, interval time.Duration) error {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*interval)
	defer cancel()
	return c.Status().Patch(pctx, tj, client.MergeFrom(prev))
}

// watch reads the live stream of the job's Progress tab until ctx ends; it returns the events.
func watch(ctx context.Context, c *http.Client, url string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 64<<20)
	events := 0
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "event: ") {
			events++
		}
	}
	return events
}

// sampleRSS reads the process's RSS every 250 ms until ctx ends.
func sampleRSS(ctx context.Context, pid int) []sample {
	start := time.Now()
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	var out []sample
	for {
		if v, err := rss(pid, "VmRSS"); err == nil {
			out = append(out, sample{Seconds: time.Since(start).Seconds(), RSS: v})
		}
		select {
		case <-ctx.Done():
			return out
		case <-tick.C:
		}
	}
}

// rss reads field (VmRSS, or VmHWM, the peak the kernel saw) of /proc/<pid>/status, in bytes.
func rss(pid int, field string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// scrape reads the UI's gantry_ui_history_* figures from /metrics; nil when it serves none (a
// gantry-ui from before the history's bounds).
func scrape(ctx context.Context, c *http.Client, url string) map[string]int64 {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil
	}
	out := map[string]int64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		name, value, ok := strings.Cut(sc.Text(), " ")
		if !ok || !strings.HasPrefix(name, "gantry_ui_history_") {
			continue
		}
		if v, err := strconv.ParseInt(value, 10, 64); err == nil {
			out[name] = v
		}
	}
	return out
}

func commit() string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = util.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

// summary is the run in a few lines.
func (r *result) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "gantry-ui under %d reports of %d new metric names (one a second", r.Reports, r.NamesPerRep)
	if r.Watched {
		b.WriteString(", the job's Progress tab open")
	}
	fmt.Fprintf(&b, ") for %s:\n", r.Duration)
	fmt.Fprintf(&b, "  RSS: %.1f MiB at start, peak %.1f MiB (VmHWM), final %.1f MiB; limit %.0f MiB\n",
		float64(r.StartRSS)/mib, float64(r.PeakRSS)/mib, float64(r.FinalRSS)/mib, float64(r.LimitRSS)/mib)
	if r.UIMetrics != nil {
		fmt.Fprintf(&b, "  history: %d bytes of a %d budget, %d jobs; dropped %d values (metric-names), %d (memory)\n",
			r.UIMetrics["gantry_ui_history_bytes"], r.UIMetrics["gantry_ui_history_budget_bytes"], r.UIMetrics["gantry_ui_history_jobs"],
			r.UIMetrics[`gantry_ui_history_dropped_total{reason="metric-names"}`], r.UIMetrics[`gantry_ui_history_dropped_total{reason="memory"}`])
	}
	fmt.Fprintf(&b, "  commit %s, %s\n", r.Commit, r.Date)
	return b.String()
}
