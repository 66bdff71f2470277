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
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"gonum.org/v1/plot/plotter"
)

// ScaleReport is the scale run's scale.json.
type ScaleReport struct {
	Parameters ScaleParameters `json:"parameters"`
	Machine    Machine         `json:"machine"`
	// Points sample the manager before the first wave and after each wave has settled.
	Points  []ScalePoint `json:"points"`
	Memory  MemoryFit    `json:"memory"`
	Idle    ScaleIdle    `json:"idle"`
	Restart ScaleRestart `json:"restart"`
}

// ScaleParameters are the run's settings.
type ScaleParameters struct {
	TrainJobs        int    `json:"trainJobs"`
	Wave             int    `json:"wave"`
	Nodes            int    `json:"nodes"`
	NodesPerTrainJob int    `json:"nodesPerTrainJob"`
	Parallel         int    `json:"parallel"`
	PodDuration      string `json:"podDuration"`
	// PodsDeleted says whether each wave's Succeeded pods were deleted once it settled.
	PodsDeleted bool `json:"podsDeleted"`
}

// ScalePoint is the manager with Settled TrainJobs finished, and the wave that brought them.
type ScalePoint struct {
	Settled    int     `json:"settled"`
	RSSMiB     float64 `json:"rssMiB"`
	RSSAnonMiB float64 `json:"rssAnonMiB"`
	HeapMiB    float64 `json:"heapMiB"`
	// CPUSeconds is the manager's CPU time since it started.
	CPUSeconds float64 `json:"cpuSeconds"`
	// WaveSeconds is from the wave's first create to its last JobSet seen; SettledSeconds to its
	// last TrainJob Complete.
	WaveSeconds    float64 `json:"waveSeconds,omitempty"`
	SettledSeconds float64 `json:"settledSeconds,omitempty"`
	// Latency is TrainJob create sent to JobSet seen, in ms, over the wave.
	Latency Summary `json:"latencyMs"`
}

// MemoryFit is the least-squares line of RSS and Go heap against settled TrainJobs, over Points
// samples after the first wave: a slope needs two.
type MemoryFit struct {
	Points             int     `json:"points"`
	RSSKiBPerTrainJob  float64 `json:"rssKiBPerTrainJob"`
	RSSInterceptMiB    float64 `json:"rssInterceptMiB"`
	HeapKiBPerTrainJob float64 `json:"heapKiBPerTrainJob"`
	HeapInterceptMiB   float64 `json:"heapInterceptMiB"`
}

// ScaleIdle is the manager over every settled TrainJob, left alone.
type ScaleIdle struct {
	Seconds        float64    `json:"seconds"`
	CPUSeconds     float64    `json:"cpuSeconds"`
	TrainJobWrites int        `json:"trainJobWrites"`
	Writes         []WriteRow `json:"writes"`
	RSSMiB         float64    `json:"rssMiB"`
}

// ScaleRestart is a manager killed and started again over every settled TrainJob.
type ScaleRestart struct {
	ReadySeconds float64 `json:"readySeconds"`
	// FreshJobSetSeconds is from the create of a TrainJob submitted once the manager was ready
	// to its JobSet.
	FreshJobSetSeconds float64 `json:"freshJobSetSeconds"`
	CaughtUpSeconds    float64 `json:"caughtUpSeconds"`
	RSSMiB             float64 `json:"rssMiB"`
	CPUSeconds         float64 `json:"cpuSeconds"`
}

// fitMemory fits RSS and heap against settled TrainJobs by least squares, over the points after
// a wave: the sample before the first wave is a manager that has not yet made a connection or
// filled a cache, and would count its warm-up as memory per TrainJob.
func fitMemory(points []ScalePoint) MemoryFit {
	var xs, rss, heap []float64
	for _, p := range points {
		if p.Settled == 0 {
			continue
		}
		xs, rss, heap = append(xs, float64(p.Settled)), append(rss, p.RSSMiB), append(heap, p.HeapMiB)
	}
	rs, ri := leastSquares(xs, rss)
	hs, hi := leastSquares(xs, heap)
	return MemoryFit{Points: len(xs), RSSKiBPerTrainJob: rs * 1024, RSSInterceptMiB: ri, HeapKiBPerTrainJob: hs * 1024, HeapInterceptMiB: hi}
}

// leastSquares returns the slope and intercept of the line that fits (xs, ys) best; a flat line
// through the mean when xs do not vary.
func leastSquares(xs, ys []float64) (slope, intercept float64) {
	n := float64(len(xs))
	if n == 0 {
		return 0, 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx += xs[i]
		sy += ys[i]
		sxx += xs[i] * xs[i]
		sxy += xs[i] * ys[i]
	}
	den := n*sxx - sx*sx
	if den == 0 {
		return 0, sy / n
	}
	slope = (n*sxy - sx*sy) / den
	return slope, (sy - slope*sx) / n
}

// Scale chart files.
const (
	chartScaleMemory  = "scale-memory.png"
	chartScaleCPU     = "scale-cpu.png"
	chartScaleLatency = "scale-latency.png"
)

// writeScaleOutputs writes scale.json, scale.md and the plots, and prints the summary.
func writeScaleOutputs(dir string, rep *ScaleReport) error {
	if err := writeJSON(filepath.Join(dir, "scale.json"), rep); err != nil {
		return err
	}
	if err := drawScaleCharts(dir, rep); err != nil {
		return fmt.Errorf("drawing the charts: %w", err)
	}
	md := scaleSummary(rep)
	if err := os.WriteFile(filepath.Join(dir, "scale.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	return nil
}

func drawScaleCharts(dir string, rep *ScaleReport) error {
	var rss, heap, cpu, p50, p99 plotter.XYs
	for _, p := range rep.Points {
		x := float64(p.Settled)
		rss = append(rss, plotter.XY{X: x, Y: p.RSSMiB})
		heap = append(heap, plotter.XY{X: x, Y: p.HeapMiB})
		cpu = append(cpu, plotter.XY{X: x, Y: p.CPUSeconds})
		if p.Latency.Count > 0 {
			p50 = append(p50, plotter.XY{X: x, Y: p.Latency.P50})
			p99 = append(p99, plotter.XY{X: x, Y: p.Latency.P99})
		}
	}
	x := "settled TrainJobs"
	charts := []struct {
		file, title, y string
		lines          []series
	}{
		{chartScaleMemory, "Manager memory against settled TrainJobs", "MiB", []series{{label: "RSS", xy: rss}, {label: "Go heap in use", xy: heap}}},
		{chartScaleCPU, "Manager CPU time since start", "CPU seconds", []series{{label: "utime+stime", xy: cpu}}},
		{chartScaleLatency, "TrainJob create to JobSet seen, per wave", "ms", []series{{label: "p50", xy: p50}, {label: "p99", xy: p99}}},
	}
	for _, c := range charts {
		if err := lineChart(filepath.Join(dir, c.file), c.title, x, c.y, false, c.lines); err != nil {
			return fmt.Errorf("%s: %w", c.file, err)
		}
	}
	return nil
}

// scaleSummary is scale.md: the parameters, a row per wave, the fit, the idle window and the
// restart.
func scaleSummary(rep *ScaleReport) string {
	var b strings.Builder
	p := rep.Parameters
	fmt.Fprintf(&b, "# Scale run\n\n%d TrainJobs of %d nodes in waves of %d, %d simulated GPU nodes (kwok), pods run %s, %d creating clients; commit %s, %d CPUs, started %s, load %.2f to %.2f.\n\n",
		p.TrainJobs, p.NodesPerTrainJob, p.Wave, p.Nodes, p.PodDuration, p.Parallel, rep.Machine.Commit, rep.Machine.CPUs,
		rep.Machine.StartedAt.Format(time.RFC3339), rep.Machine.LoadAverageStart, rep.Machine.LoadAverageEnd)
	if p.PodsDeleted {
		b.WriteString("Each wave's Succeeded pods were deleted once it settled (`-delete-pods`; the manager reads no pods).\n\n")
	}
	b.WriteString("| Settled TrainJobs | RSS (anonymous) | Go heap in use | CPU since start | Wave: all JobSets | Wave: all Complete | p50 / p99 create to JobSet |\n|---|---|---|---|---|---|---|\n")
	for _, pt := range rep.Points {
		wave := "– | – | –" // the sample before the first wave
		if pt.Latency.Count > 0 {
			wave = fmt.Sprintf("%.1f s | %.1f s | %.0f / %.0f ms", pt.WaveSeconds, pt.SettledSeconds, pt.Latency.P50, pt.Latency.P99)
		}
		fmt.Fprintf(&b, "| %d | %.1f MiB (%.1f) | %.1f MiB | %.1f s | %s |\n", pt.Settled, pt.RSSMiB, pt.RSSAnonMiB, pt.HeapMiB, pt.CPUSeconds, wave)
	}
	b.WriteString(memoryFitLine(rep.Memory))
	id := rep.Idle
	fmt.Fprintf(&b, "Idle over %d settled TrainJobs for %.0f s: %d TrainJob writes (%d writes in all), %.2f CPU seconds, RSS %.1f MiB.\n\n",
		p.TrainJobs, id.Seconds, id.TrainJobWrites, totalWrites(id.Writes), id.CPUSeconds, id.RSSMiB)
	rs := rep.Restart
	fmt.Fprintf(&b, "Restart over %d settled TrainJobs: ready (/readyz) %.1f s after the start; a TrainJob created then had its JobSet %.2f s later; every TrainJob reconciled and the queue empty %.1f s after the start; RSS then %.1f MiB, CPU %.1f s.\n\n",
		p.TrainJobs, rs.ReadySeconds, rs.FreshJobSetSeconds, rs.CaughtUpSeconds, rs.RSSMiB, rs.CPUSeconds)
	fmt.Fprintf(&b, "Charts: %s, %s, %s. The manager's heap after the idle window: %s (`go tool pprof -sample_index=inuse_space -top %s`).\n",
		chartScaleMemory, chartScaleCPU, chartScaleLatency, scaleHeapProfile, scaleHeapProfile)
	return b.String()
}

func totalWrites(rows []WriteRow) int {
	n := 0
	for _, r := range rows {
		n += r.Count
	}
	return n
}

// memoryFitLine reports the memory per settled TrainJob, or why there is none: the start's
// sample is left out (start-up garbage), so a slope needs two waves.
func memoryFitLine(m MemoryFit) string {
	if m.Points < 2 {
		return fmt.Sprintf("\nMemory per settled TrainJob: not fitted, %d sample(s) after the first wave; it needs two waves or more (-wave below -n).\n\n", m.Points)
	}
	return fmt.Sprintf("\nMemory per settled TrainJob (least squares over the %d samples from the first wave on): RSS %.2f KiB (from %.1f MiB), Go heap %.2f KiB (from %.1f MiB).\n\n",
		m.Points, m.RSSKiBPerTrainJob, m.RSSInterceptMiB, m.HeapKiBPerTrainJob, m.HeapInterceptMiB)
}
