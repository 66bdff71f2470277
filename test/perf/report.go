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
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"
	"time"
)

// Report holds every figure of one `make bench` run; it is written as bench.json.
type Report struct {
	Parameters Parameters        `json:"parameters"`
	Machine    Machine           `json:"machine"`
	Scenarios  []*ScenarioResult `json:"scenarios"`
	Targets    []Target          `json:"targets"`
}

// Parameters are the inputs of the run.
type Parameters struct {
	TrainJobs        int `json:"trainJobs"`
	NodesPerTrainJob int `json:"nodesPerTrainJob"`
	Parallel         int `json:"parallelClients"`
	// Runs is how many times each scenario ran (-repeat).
	Runs   int      `json:"runs"`
	Limits []limits `json:"limits"`
	// ClientsUnlimited: the harness's TrainJob clients had no rate limit, whatever the scenario.
	ClientsUnlimited bool          `json:"clientsUnlimited,omitempty"`
	Unrelated        unrelatedSpec `json:"unrelated"`
	// Webhooks says how admission is set up: Gantry's webhooks are registered as installed.
	Webhooks string `json:"webhooks"`
	// FeatureGates are the manager's: the defaults, or the defaults with -feature-gates applied.
	FeatureGates string `json:"featureGates"`
	// ManagerConfig is what -manager-config added to the manager's Configuration.
	ManagerConfig string `json:"managerConfig,omitempty"`
	// Timing says where the times come from.
	Timing string `json:"timing"`
}

// Machine describes where the figures were taken.
type Machine struct {
	CPUs             int       `json:"cpus"`
	GoVersion        string    `json:"goVersion"`
	Commit           string    `json:"commit"`
	StartedAt        time.Time `json:"startedAt"`
	LoadAverageStart float64   `json:"loadAverageStart"`
	LoadAverageEnd   float64   `json:"loadAverageEnd"`
}

// limits are client-side rate limits (client-go's token bucket).
type limits struct {
	Label string  `json:"label"`
	QPS   float32 `json:"qps"`
	Burst int     `json:"burst"`
}

// ScenarioResult is one control plane's worth of measurements: a baseline or a Gantry run.
type ScenarioResult struct {
	Name string `json:"name"`
	// Run numbers the repetitions of -repeat, from 1; 0 when each scenario ran once.
	Run  int    `json:"run,omitempty"`
	Kind string `json:"kind"`
	// Method is how a baseline writes its JobSets: create (the reference of the ratio) or
	// server-side apply (what the controller sends).
	Method    string `json:"method,omitempty"`
	Limits    limits `json:"limits"`
	Unrelated int    `json:"unrelatedObjects"`
	// UnrelatedSeconds is how long creating the unrelated objects took (before the manager).
	UnrelatedSeconds float64 `json:"unrelatedSeconds,omitempty"`
	// LoadAverage is the 1-minute load average before and after the scenario.
	LoadAverage [2]float64   `json:"loadAverage"`
	Create      CreatePhase  `json:"create"`
	Happy       *WritePhase  `json:"happyPath,omitempty"`
	Resync      *WritePhase  `json:"noOpResync,omitempty"`
	StatusPath  *StatusPhase `json:"statusPath,omitempty"`
	// Idle is the first manager's RSS once it is up and quiet, before the TrainJobs (one warm-up
	// TrainJob exists): VmRSS, RssAnon and RssFile (Gantry only).
	Idle *IdleRSS `json:"idle,omitempty"`
	// Managers is the kernel's account (peak RSS, CPU) of each manager process.
	Managers []ManagerUsage `json:"managers,omitempty"`
	// ControlPlaneCPUSeconds is what kube-apiserver and etcd used during the creation phase.
	ControlPlaneCPUSeconds float64 `json:"controlPlaneCPUSeconds"`
	// Retries counts client requests retried after a transient apiserver error.
	Retries  int64    `json:"retries"`
	Profiles []string `json:"profiles,omitempty"`
}

// CreatePhase is the creation of N JobSets, directly (baseline) or through TrainJobs.
type CreatePhase struct {
	// WallSeconds runs from the first create request to the moment the last JobSet was seen.
	WallSeconds float64 `json:"wallSeconds"`
	// SubmitSeconds is when the last create request (TrainJob or JobSet) returned.
	SubmitSeconds float64 `json:"submitSeconds"`
	// Latency: Gantry, from seeing a TrainJob to seeing its JobSet; baseline, from sending the
	// create request to seeing the JobSet. Milliseconds.
	Latency Summary `json:"latencyMillis"`
	// Latencies are every latency, sorted (milliseconds), for the CDF chart.
	Latencies []float64 `json:"latenciesMillis"`
	// JobSetSeconds are the times, since the first create, at which each JobSet was seen, sorted.
	JobSetSeconds []float64 `json:"jobSetSeconds"`
	// ManagerCPUSeconds is the manager's CPU time during the phase (Gantry only).
	ManagerCPUSeconds float64 `json:"managerCPUSeconds,omitempty"`
	// Admission is what the TrainJob webhooks cost each create, by the apiserver (Gantry only).
	Admission []AdmissionLatency `json:"admission,omitempty"`
	// WebhookRequests and WebhookHandshakes are the requests the manager's webhook server
	// answered and the TLS handshakes it began (Gantry only): how well the apiserver reuses
	// its connections.
	WebhookRequests   float64 `json:"webhookRequests,omitempty"`
	WebhookHandshakes float64 `json:"webhookHandshakes,omitempty"`
	// GCs is how many garbage collections the manager ran in the phase, and GCPauseMaxMs the
	// longest stop-the-world pause of its last 256 (go_gc_duration_seconds), read after it.
	GCs          float64 `json:"gcs,omitempty"`
	GCPauseMaxMs float64 `json:"gcPauseMaxMillis,omitempty"`
	// Breakdown cuts the TrainJob-to-JobSet latency into stages (Gantry only).
	Breakdown *Breakdown `json:"breakdown,omitempty"`
}

// Summary is a latency distribution in milliseconds (nearest-rank percentiles).
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P95   float64 `json:"p95"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
	Mean  float64 `json:"mean"`
}

// WritePhase is what the manager wrote during one phase.
type WritePhase struct {
	Seconds float64 `json:"seconds"`
	// Reconciles is how many TrainJob reconciles the phase ran (controller_runtime_reconcile_total).
	Reconciles float64 `json:"reconciles"`
	// ClientWrites is the manager's rest_client_requests_total by write method over the phase:
	// everything its client sent, leader election included.
	ClientWrites map[string]float64 `json:"clientWrites"`
	// Writes are the manager's writes from the apiserver's audit log, by verb and resource.
	Writes []WriteRow `json:"writes"`
	// PerTrainJob is the writes in the benchmark namespace divided by N.
	PerTrainJob float64 `json:"perTrainJob"`
}

// StatusPhase marks every JobSet Completed and waits for every TrainJob to be Complete.
type StatusPhase struct {
	WallSeconds float64 `json:"wallSeconds"`
	// Latency runs from the JobSet status write returning to seeing the TrainJob Complete.
	Latency Summary `json:"latencyMillis"`
	// CompleteSeconds are the times, since the first JobSet status write, at which each TrainJob
	// was seen Complete, sorted.
	CompleteSeconds []float64   `json:"completeSeconds"`
	Writes          *WritePhase `json:"writes"`
}

// ManagerUsage is one manager process's peak RSS and CPU.
type ManagerUsage struct {
	Name string `json:"name"`
	// Phases are what the process lived through.
	Phases       string  `json:"phases"`
	PeakRSSBytes int64   `json:"peakRSSBytes"`
	CPUSeconds   float64 `json:"cpuSeconds"`
	// RSSAnonBytes and RSSFileBytes split the RSS at the end into allocated memory and mapped
	// files (the binary's pages).
	RSSAnonBytes int64 `json:"rssAnonBytes"`
	RSSFileBytes int64 `json:"rssFileBytes"`
	// GoMemStats are the Go runtime's memory gauges at the end (go_memstats_*_bytes).
	GoMemStats map[string]float64 `json:"goMemStats,omitempty"`
}

// Target is one goal of the issue and whether this run met it.
type Target struct {
	Name     string  `json:"name"`
	Limit    string  `json:"limit"`
	Measured string  `json:"measured"`
	Met      bool    `json:"met"`
	Value    float64 `json:"value"`
	// Max is the limit as a number: Value <= Max meets the target.
	Max float64 `json:"max"`
	// Min and Median are the spread of Value over the runs of -repeat (Value is then the median).
	Min    float64 `json:"min,omitempty"`
	Median float64 `json:"median,omitempty"`
}

// Label names the result in tables and charts: the scenario, and its run when repeated.
func (s *ScenarioResult) Label() string {
	if s.Run == 0 {
		return s.Name
	}
	return fmt.Sprintf("%s #%d", s.Name, s.Run)
}

// summarize sorts ms in place and returns its distribution.
func summarize(ms []float64) Summary {
	if len(ms) == 0 {
		return Summary{}
	}
	slices.Sort(ms)
	sum := 0.0
	for _, v := range ms {
		sum += v
	}
	return Summary{
		Count: len(ms),
		P50:   percentile(ms, 50),
		P95:   percentile(ms, 95),
		P99:   percentile(ms, 99),
		Max:   ms[len(ms)-1],
		Mean:  sum / float64(len(ms)),
	}
}

// percentile is the nearest-rank percentile of sorted values.
func percentile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank, 1), len(sorted))-1]
}

// sinceSorted returns each time as seconds since start, sorted.
func sinceSorted(times map[string]time.Time, start time.Time) []float64 {
	out := make([]float64, 0, len(times))
	for _, t := range times {
		out = append(out, t.Sub(start).Seconds())
	}
	slices.Sort(out)
	return out
}

func writeJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// IdleRSS is a quiet manager's resident memory, bytes.
type IdleRSS struct {
	RSS  int64 `json:"rss"`
	Anon int64 `json:"anon"`
	File int64 `json:"file"`
}
