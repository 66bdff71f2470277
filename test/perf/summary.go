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
	"cmp"
	"fmt"
	"slices"
	"strings"
)

const mib = 1 << 20

// Targets of the performance issues (21, 39).
const (
	targetRatio     = 1.5
	targetFloor     = 1.2
	targetP99Ms     = 1500
	targetAdmitMs   = 5
	targetWrites    = 3
	targetRSSMiB    = 64
	targetIdleMiB   = 40
	targetRSSN      = 1000
	targetUnrelated = 20000
)

func (r *Report) scenario(name string) *ScenarioResult {
	for _, s := range r.Scenarios {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// baselineFor is the baseline run with the same client limits as s, in the same run.
func (r *Report) baselineFor(s *ScenarioResult) *ScenarioResult {
	for _, b := range r.Scenarios {
		if b.Kind == kindBaseline && b.Method == methodCreate && b.Limits == s.Limits && b.Run == s.Run {
			return b
		}
	}
	return nil
}

// floorFor is the floor scenario run with s's client limits in the same run, if any.
func (r *Report) floorFor(s *ScenarioResult) *ScenarioResult {
	for _, b := range r.Scenarios {
		if b.Kind == kindBaseline && b.Method == methodFloor && b.Limits == s.Limits && b.Run == s.Run {
			return b
		}
	}
	return nil
}

// lifecycleWrites is what one TrainJob costs in writes from creation to Complete: the creation
// phase plus the status path.
func lifecycleWrites(s *ScenarioResult) float64 {
	w := 0.0
	if s.Happy != nil {
		w += s.Happy.PerTrainJob
	}
	if s.StatusPath != nil && s.StatusPath.Writes != nil {
		w += s.StatusPath.Writes.PerTrainJob
	}
	return w
}

func peakRSS(s *ScenarioResult) int64 {
	var peak int64
	for _, m := range s.Managers {
		peak = max(peak, m.PeakRSSBytes)
	}
	return peak
}

// evaluateTargets checks the targets against the scenarios that measure them. A target
// whose scenario did not run is left out; one measured at other sizes says so.
func evaluateTargets(r *Report) []Target {
	if r.Parameters.Runs <= 1 {
		return runTargets(r)
	}
	var names []string
	byName := map[string][]Target{}
	for run := 1; run <= r.Parameters.Runs; run++ {
		one := &Report{Parameters: r.Parameters, Scenarios: slices.DeleteFunc(slices.Clone(r.Scenarios), func(s *ScenarioResult) bool { return s.Run != run })}
		for _, t := range runTargets(one) {
			if _, seen := byName[t.Name]; !seen {
				names = append(names, t.Name)
			}
			byName[t.Name] = append(byName[t.Name], t)
		}
	}
	out := make([]Target, 0, len(names))
	for _, name := range names {
		out = append(out, spread(byName[name]))
	}
	return out
}

// spread combines one target's results over the runs: judged on the median run, with the
// minimum, median and maximum of its value (the lower middle of an even count).
func spread(ts []Target) Target {
	sorted := slices.SortedFunc(slices.Values(ts), func(a, b Target) int { return cmp.Compare(a.Value, b.Value) })
	med := sorted[(len(sorted)-1)/2]
	med.Min, med.Median = sorted[0].Value, med.Value
	med.Measured = fmt.Sprintf("%s; over %d runs min %.2f / median %.2f / max %.2f", med.Measured, len(ts), sorted[0].Value, med.Value, sorted[len(sorted)-1].Value)
	med.Met = med.Value <= med.Max
	return med
}

// runTargets evaluates the targets on the scenarios of one run.
func runTargets(r *Report) []Target {
	var out []Target
	size := ""
	if r.Parameters.TrainJobs != targetRSSN {
		size = fmt.Sprintf(" (at N=%d, not %d)", r.Parameters.TrainJobs, targetRSSN)
	}
	if g := r.scenario("gantry-no-limits"); g != nil {
		if b := r.baselineFor(g); b != nil && b.Create.WallSeconds > 0 {
			ratio := g.Create.WallSeconds / b.Create.WallSeconds
			out = append(out, Target{
				Name: "all JobSets created, rate limits off, relative to direct creation" + size, Limit: fmt.Sprintf("<= %.1fx", targetRatio),
				Measured: fmt.Sprintf("%.2fx (%.1f s vs %.1f s)", ratio, g.Create.WallSeconds, b.Create.WallSeconds),
				Met:      ratio <= targetRatio, Value: ratio, Max: targetRatio,
			})
		}
		w := lifecycleWrites(g)
		out = append(out, floorTargets(r, g, size)...)
		out = append(out, p99Target(r, g, "client limits "+describeLimits(g.Limits)+size))
		if a := slowestAdmission(g); a != nil {
			out = append(out, Target{
				Name: "TrainJob webhook p99 admission latency (apiserver histogram)" + size, Limit: fmt.Sprintf("<= %d ms", targetAdmitMs),
				Measured: fmt.Sprintf("%.1f ms (%s %s)", a.P99Ms, a.Type, a.Webhook),
				Met:      a.P99Ms <= targetAdmitMs, Value: a.P99Ms, Max: targetAdmitMs,
			})
		}
		out = append(out, Target{
			Name: "writes per TrainJob, creation to Complete", Limit: fmt.Sprintf("<= %d", targetWrites),
			Measured: fmt.Sprintf("%.2f (creation %.2f + status path %.2f)", w, g.Happy.PerTrainJob, g.StatusPath.Writes.PerTrainJob),
			Met:      w <= targetWrites, Value: w, Max: targetWrites,
		})
		out = append(out, Target{
			Name: "writes per TrainJob on a no-op resync (manager restart)", Limit: "0",
			Measured: fmt.Sprintf("%.2f over %.0f reconciles", g.Resync.PerTrainJob, g.Resync.Reconciles),
			Met:      g.Resync.PerTrainJob == 0, Value: g.Resync.PerTrainJob, Max: 0,
		}, rssTarget("manager peak RSS"+size, g))
		if g.Idle != nil {
			idle := float64(g.Idle.RSS) / mib
			out = append(out, Target{
				Name: "manager RSS idle", Limit: fmt.Sprintf("<= %d MiB", targetIdleMiB),
				Measured: fmt.Sprintf("%.1f MiB (anonymous %.1f, files %.1f)", idle, float64(g.Idle.Anon)/mib, float64(g.Idle.File)/mib),
				Met:      idle <= targetIdleMiB, Value: idle, Max: targetIdleMiB,
			})
		}
	}
	if g := r.scenario("gantry-no-limits-unrelated"); g != nil {
		sz := size
		if g.Unrelated != targetUnrelated && sz == "" {
			sz = fmt.Sprintf(" (with %d unrelated objects, not %d)", g.Unrelated, targetUnrelated)
		}
		out = append(out, p99Target(r, g, "with the unrelated objects"+sz), rssTarget("manager peak RSS with the unrelated objects"+sz, g))
	}
	return out
}

// p99Target is the p99 from a TrainJob to its JobSet in g, beside the floor's when it ran.
func p99Target(r *Report, g *ScenarioResult, label string) Target {
	measured := fmt.Sprintf("%.0f ms", g.Create.Latency.P99)
	if f := r.floorFor(g); f != nil {
		measured += fmt.Sprintf(" (the floor: %.0f ms)", f.Create.Latency.P99)
	}
	return Target{
		Name: "p99 TrainJob to JobSet, " + label, Limit: fmt.Sprintf("<= %d ms", targetP99Ms), Measured: measured,
		Met: g.Create.Latency.P99 <= targetP99Ms, Value: g.Create.Latency.P99, Max: targetP99Ms,
	}
}

// rssTarget is the highest peak RSS of g's manager processes.
func rssTarget(name string, g *ScenarioResult) Target {
	rss := float64(peakRSS(g)) / mib
	return Target{
		Name: name, Limit: fmt.Sprintf("<= %d MiB", targetRSSMiB),
		Measured: fmt.Sprintf("%.1f MiB", rss), Met: rss <= targetRSSMiB, Value: rss, Max: targetRSSMiB,
	}
}

// slowestAdmission is the TrainJob webhook with the highest p99 in s's creation phase.
func slowestAdmission(s *ScenarioResult) *AdmissionLatency {
	var slowest *AdmissionLatency
	for i := range s.Create.Admission {
		if a := &s.Create.Admission[i]; slowest == nil || a.P99Ms > slowest.P99Ms {
			slowest = a
		}
	}
	return slowest
}

// floorTargets compare a Gantry scenario with the floor run at its client limits: every JobSet
// within targetFloor times the floor's time.
func floorTargets(r *Report, g *ScenarioResult, size string) []Target {
	f := r.floorFor(g)
	if f == nil || f.Create.WallSeconds <= 0 {
		return nil
	}
	ratio := g.Create.WallSeconds / f.Create.WallSeconds
	return []Target{{
		Name: "all JobSets created, client limits " + describeLimits(g.Limits) + ", relative to the floor" + size, Limit: fmt.Sprintf("<= %.1fx", targetFloor),
		Measured: fmt.Sprintf("%.2fx (%.1f s vs %.1f s)", ratio, g.Create.WallSeconds, f.Create.WallSeconds),
		Met:      ratio <= targetFloor, Value: ratio, Max: targetFloor,
	}}
}

// markdownSummary renders the report for humans; `make bench` prints it.
func markdownSummary(r *Report, charts []string) string {
	var b strings.Builder
	p, m := r.Parameters, r.Machine
	fmt.Fprintf(&b, "# Gantry benchmark\n\n")
	fmt.Fprintf(&b, "%d TrainJobs of %d nodes, %d parallel clients; %d CPUs, %s, commit %s; load average %.2f at the start, %.2f at the end.\n\n",
		p.TrainJobs, p.NodesPerTrainJob, p.Parallel, m.CPUs, m.GoVersion, m.Commit, m.LoadAverageStart, m.LoadAverageEnd)
	fmt.Fprintf(&b, "- Webhooks: %s.\n- Feature gates: %s.\n- Times: %s.\n", p.Webhooks, p.FeatureGates, p.Timing)
	if p.ManagerConfig != "" {
		fmt.Fprintf(&b, "- Added to the manager's Configuration: `%s`.\n", p.ManagerConfig)
	}
	who := "for the manager and the harness's clients alike"
	if p.ClientsUnlimited {
		who = "for the manager and the baselines; the harness's TrainJob clients had none"
	}
	fmt.Fprintf(&b, "- Client limits: the -default-limits scenarios use QPS %g, burst %d (%s: %s) %s; \"off\" is no client-side limit.\n\n",
		p.Limits[0].QPS, p.Limits[0].Burst, p.Limits[0].Label, "the manager's default unless -qps or -burst changed it", who)
	creationTable(&b, r)
	admissionTable(&b, r)
	stagesTable(&b, r)
	writesTable(&b, r)
	statusTable(&b, r)
	resourcesTable(&b, r)
	if len(r.Targets) > 0 {
		fmt.Fprintf(&b, "## Targets\n\n| Target | Limit | Measured | Met |\n|---|---|---|---|\n")
		for _, t := range r.Targets {
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", t.Name, t.Limit, t.Measured, yesNo(t.Met))
		}
		b.WriteString("\n")
	}
	if len(charts) > 0 {
		fmt.Fprintf(&b, "Charts: %s.\n", strings.Join(charts, ", "))
	}
	return b.String()
}

func creationTable(b *strings.Builder, r *Report) {
	fmt.Fprintf(b, "## Creation of %d JobSets\n\n", r.Parameters.TrainJobs)
	b.WriteString("| Scenario | Client limits | All JobSets exist after | Ratio to baseline | Ratio to floor | Latency p50 / p95 / p99 / max (ms) | Creates returned after | Manager CPU | apiserver+etcd CPU | Load |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Scenarios {
		ratio, toFloor, mgrCPU := "–", "–", "–"
		if base := r.baselineFor(s); base != nil && base != s && base.Create.WallSeconds > 0 {
			ratio = fmt.Sprintf("%.2fx", s.Create.WallSeconds/base.Create.WallSeconds)
		}
		if f := r.floorFor(s); f != nil && f != s && f.Create.WallSeconds > 0 {
			toFloor = fmt.Sprintf("%.2fx", s.Create.WallSeconds/f.Create.WallSeconds)
		}
		if s.Kind == kindGantry {
			mgrCPU = fmt.Sprintf("%.1f s", s.Create.ManagerCPUSeconds)
		}
		l := s.Create.Latency
		fmt.Fprintf(b, "| %s | %s | %.2f s | %s | %s | %.0f / %.0f / %.0f / %.0f | %.2f s | %s | %.1f s | %.2f → %.2f |\n",
			s.Label(), describeLimits(s.Limits), s.Create.WallSeconds, ratio, toFloor, l.P50, l.P95, l.P99, l.Max,
			s.Create.SubmitSeconds, mgrCPU, s.ControlPlaneCPUSeconds, s.LoadAverage[0], s.LoadAverage[1])
	}
	b.WriteString("\nLatency: Gantry rows from the TrainJob appearing to its JobSet appearing; baseline rows from the request to the JobSet appearing. ")
	b.WriteString("Baselines create their JobSets, except -apply ones, which send the server-side apply the controller sends (context; the ratio is to the create baseline). ")
	b.WriteString("Floor rows create each TrainJob, then its JobSet, with no webhooks and no controller: the least work any TrainJob pipeline can do; their latency runs from the TrainJob request.\n\n")
}

func admissionTable(b *strings.Builder, r *Report) {
	b.WriteString("## Admission of the TrainJob creates\n\n")
	b.WriteString("From kube-apiserver's `" + admissionMetric + "` (CREATE calls of the creation phase; buckets from 5 ms, interpolated below); served: the same calls as the manager's webhook server timed them (`" + servedMetric + "`, decade buckets, so an order of magnitude); the difference is the trip, TLS and waiting for a CPU.\n\n")
	b.WriteString("| Scenario | Webhook | Type | Calls | p50 / p99 (ms) | served p50 / p99 (ms) |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Scenarios {
		for _, a := range s.Create.Admission {
			fmt.Fprintf(b, "| %s | %s | %s | %.0f | %.2f / %.2f | %.2f / %.2f |\n", s.Label(), a.Webhook, a.Type, a.Calls, a.P50Ms, a.P99Ms, a.ServedP50Ms, a.ServedP99Ms)
		}
	}
	b.WriteString("\nTLS handshakes the webhook server began (`gantry_webhook_tls_handshakes_total`) against the requests it answered, creation phase:")
	for _, s := range r.Scenarios {
		if s.Kind == kindGantry {
			fmt.Fprintf(b, " %s %.0f / %.0f;", s.Label(), s.Create.WebhookHandshakes, s.Create.WebhookRequests)
		}
	}
	b.WriteString(" the manager's garbage collections in the phase, and its longest pause of the last 256 (`go_gc_duration_seconds`):")
	for _, s := range r.Scenarios {
		if s.Kind == kindGantry {
			fmt.Fprintf(b, " %s %.0f, %.2f ms;", s.Label(), s.Create.GCs, s.Create.GCPauseMaxMs)
		}
	}
	b.WriteString("\n\n")
}

func stagesTable(b *strings.Builder, r *Report) {
	b.WriteString("## Where the time goes, TrainJob to JobSet\n\n")
	b.WriteString("Each TrainJob's way cut at the apiserver's audit timestamps (request received, response complete); each cell p50 / p99 / the mean over the slowest 1% of TrainJobs (by the way from the create's response to the JobSet seen), ms. ")
	for _, n := range stageNames {
		fmt.Fprintf(b, "*%s*: %s. ", n[0], n[1])
	}
	b.WriteString("Queue and reconcile: the manager's own histograms (p50 / p99). Slow creates: TrainJob creates over the apiserver's 500 ms threshold, with the webhook time it annotated them with (mean).\n\n| Scenario | TrainJobs |")
	for _, n := range stageNames {
		fmt.Fprintf(b, " %s |", n[0])
	}
	b.WriteString(" Queue wait | Reconcile | Slow creates (webhook mean) |\n|---|---|" + strings.Repeat("---|", len(stageNames)+3) + "\n")
	for _, s := range r.Scenarios {
		d := s.Create.Breakdown
		if d == nil {
			continue
		}
		fmt.Fprintf(b, "| %s | %d |", s.Label(), d.TrainJobs)
		if len(d.Stages) == 0 {
			b.WriteString(strings.Repeat(" – |", len(stageNames)))
		}
		for _, st := range d.Stages {
			fmt.Fprintf(b, " %.0f / %.0f / %.0f |", st.Summary.P50, st.Summary.P99, st.SlowestMean)
		}
		fmt.Fprintf(b, " %.1f / %.0f | %.1f / %.0f | %d (%.0f ms) |\n", d.QueueWait[0], d.QueueWait[1], d.Reconcile[0], d.Reconcile[1], d.SlowCreates, d.SlowCreateWebhookMean)
	}
	b.WriteString("\n")
}

func writesTable(b *strings.Builder, r *Report) {
	b.WriteString("## API writes by the manager\n\n")
	b.WriteString("From the apiserver's audit log (the manager's user only). Per TrainJob counts the benchmark namespace; other rows are the manager's own bookkeeping.\n\n")
	b.WriteString("| Scenario | Phase | Reconciles | Verb | Resource | Object | Count | Per TrainJob |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Scenarios {
		for _, ph := range phasesOf(s) {
			if len(ph.w.Writes) == 0 {
				fmt.Fprintf(b, "| %s | %s | %.0f | – | (none) | – | 0 | 0 |\n", s.Label(), ph.name, ph.w.Reconciles)
			}
			for _, w := range ph.w.Writes {
				per := "–"
				if w.PerTrainJob {
					per = fmt.Sprintf("%.2f", float64(w.Count)/float64(r.Parameters.TrainJobs))
				}
				failed := ""
				if w.Failed > 0 {
					failed = fmt.Sprintf(" (%d failed: %v)", w.Failed, w.Codes)
				}
				fmt.Fprintf(b, "| %s | %s | %.0f | %s | %s | %s | %d%s | %s |\n", s.Label(), ph.name, ph.w.Reconciles, w.Verb, w.Resource,
					cmp.Or(w.Object, "–"), w.Count, failed, per)
			}
		}
	}
	b.WriteString("\nThe manager's own client metrics (`rest_client_requests_total`, write methods, leader election included):\n\n")
	b.WriteString("| Scenario | Phase | POST | PUT | PATCH | DELETE |\n|---|---|---|---|---|---|\n")
	for _, s := range r.Scenarios {
		for _, ph := range phasesOf(s) {
			c := ph.w.ClientWrites
			fmt.Fprintf(b, "| %s | %s | %.0f | %.0f | %.0f | %.0f |\n", s.Label(), ph.name, c["POST"], c["PUT"], c["PATCH"], c["DELETE"])
		}
	}
	b.WriteString("\n")
}

type namedPhase struct {
	name string
	w    *WritePhase
}

func phasesOf(s *ScenarioResult) []namedPhase {
	var out []namedPhase
	if s.Happy != nil {
		out = append(out, namedPhase{"creation", s.Happy})
	}
	if s.Resync != nil {
		out = append(out, namedPhase{"no-op resync (restart)", s.Resync})
	}
	if s.StatusPath != nil && s.StatusPath.Writes != nil {
		out = append(out, namedPhase{"status path", s.StatusPath.Writes})
	}
	return out
}

func statusTable(b *strings.Builder, r *Report) {
	rows := slices.DeleteFunc(slices.Clone(r.Scenarios), func(s *ScenarioResult) bool { return s.StatusPath == nil })
	if len(rows) == 0 {
		return
	}
	b.WriteString("## Status path\n\nEvery JobSet marked Completed through its status subresource, as the JobSet controller does.\n\n")
	b.WriteString("| Scenario | All TrainJobs Complete after | Latency p50 / p95 / p99 / max (ms) |\n|---|---|---|\n")
	for _, s := range rows {
		l := s.StatusPath.Latency
		fmt.Fprintf(b, "| %s | %.2f s | %.0f / %.0f / %.0f / %.0f |\n", s.Label(), s.StatusPath.WallSeconds, l.P50, l.P95, l.P99, l.Max)
	}
	b.WriteString("\nLatency: from the JobSet status write returning to the TrainJob appearing Complete.\n\n")
}

func resourcesTable(b *strings.Builder, r *Report) {
	b.WriteString("## Manager memory and CPU\n\n")
	b.WriteString("| Scenario | Unrelated objects | Process | Lived through | Peak RSS | CPU | RSS at the end: anonymous / files | Go heap in use / from the OS |\n|---|---|---|---|---|---|---|---|\n")
	for _, s := range r.Scenarios {
		for _, m := range s.Managers {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %.1f MiB | %.1f s | %.1f / %.1f MiB | %.1f / %.1f MiB |\n", s.Label(), s.Unrelated, m.Name, m.Phases,
				float64(m.PeakRSSBytes)/mib, m.CPUSeconds, float64(m.RSSAnonBytes)/mib, float64(m.RSSFileBytes)/mib,
				m.GoMemStats["heap_inuse"]/mib, m.GoMemStats["heap_sys"]/mib)
		}
	}
	b.WriteString("\nPeak RSS counts the binary's mapped pages (the \"files\" part) as well as allocated memory. Idle, the first manager up and quiet before the TrainJobs (RSS: anonymous / files):")
	for _, s := range r.Scenarios {
		if s.Idle != nil {
			fmt.Fprintf(b, " %s %.1f MiB (%.1f / %.1f);", s.Label(), float64(s.Idle.RSS)/mib, float64(s.Idle.Anon)/mib, float64(s.Idle.File)/mib)
		}
	}
	b.WriteString("\n\n")
}

func yesNo(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}
