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
	"io"
	"slices"
	"strings"
	"time"
)

// Stage is one step of a TrainJob's way to its JobSet, over every TrainJob of the creation phase,
// in milliseconds. The steps are cut at the apiserver's own timestamps in the audit log (when a
// request arrived, when its response was complete), so they add up to the way from the
// TrainJob's create to its JobSet without gaps.
type Stage struct {
	Name string `json:"name"`
	// What the stage holds, for a reader of the summary.
	Holds   string  `json:"holds"`
	Summary Summary `json:"summary"`
	// SlowestMean is the stage's mean over the TrainJobs whose end-to-end latency is at or above
	// the p99: where the tail spends its time.
	SlowestMean float64 `json:"slowestMeanMillis"`
}

// Breakdown is the creation phase's latency by stage, with the manager's own view of its queue
// and reconciles beside it.
type Breakdown struct {
	// TrainJobs is how many TrainJobs had every timestamp (create, snapshot, JobSet apply, seen).
	TrainJobs int     `json:"trainJobs"`
	Stages    []Stage `json:"stages"`
	// Slowest is how many TrainJobs SlowestMean averages over.
	Slowest int `json:"slowest"`
	// SlowCreates counts TrainJob creates over the apiserver's 500 ms latency threshold, with
	// the webhook share the apiserver annotated them with (the mean, milliseconds).
	SlowCreates           int     `json:"slowCreates"`
	SlowCreateWebhookMean float64 `json:"slowCreateWebhookMeanMillis,omitempty"`
	// QueueWait and Reconcile are the manager's TrainJob workqueue wait and reconcile time
	// (controller-runtime's histograms, interpolated; milliseconds): p50 and p99.
	QueueWait [2]float64 `json:"queueWaitMillis"`
	Reconcile [2]float64 `json:"reconcileMillis"`
}

// stageNames name the stages in order, and say what each holds.
var stageNames = [][2]string{
	{"TrainJob create", "the user's create at the apiserver: admission webhooks, etcd"},
	{"to the manager's first write", "watch to the manager, its queue, the reconcile up to its first request (runtime, render), client-side limits"},
	{"snapshot create", "the runtime snapshot ConfigMap at the apiserver"},
	{"between the writes", "the manager between the snapshot's response and the JobSet apply"},
	{"JobSet apply", "the server-side apply of the JobSet at the apiserver"},
	{"to the harness's watch", "watch delivery of the JobSet to the harness"},
}

// requestTimes is one request in the audit log: when it arrived and when its response was done.
type requestTimes struct {
	received, done time.Time
	webhook        time.Duration // the apiserver's annotation, on slow requests only
}

// trainJobTimes are the requests on one TrainJob's way to its JobSet.
type trainJobTimes struct {
	create, snapshot, jobSet *requestTimes
}

// readStageTimes reads the audit log's TrainJob creates and the manager's snapshot creates and
// JobSet applies in the benchmark namespace, the first of each per TrainJob.
func readStageTimes(path string) (map[string]*trainJobTimes, error) {
	return readAuditLog(path, parseStageTimes)
}

func parseStageTimes(r io.Reader) (map[string]*trainJobTimes, error) {
	out := map[string]*trainJobTimes{}
	err := eachEvent(r, func(e auditEvent) {
		if e.Stage != "ResponseComplete" || e.ObjectRef == nil || e.ObjectRef.Namespace != benchNamespace ||
			e.ObjectRef.Subresource != "" || (e.ResponseStatus != nil && e.ResponseStatus.Code >= 300) {
			return
		}
		name := trainJobNamePrefix.FindString(e.ObjectRef.Name)
		if name == "" {
			return
		}
		t := out[name]
		if t == nil {
			t = &trainJobTimes{}
			out[name] = t
		}
		req := &requestTimes{received: e.RequestReceivedTimestamp, done: e.StageTimestamp}
		switch {
		case e.ObjectRef.Resource == "trainjobs" && e.Verb == "create" && t.create == nil:
			req.webhook = e.webhookLatency()
			t.create = req
		case e.User.Username == managerUser && e.ObjectRef.Resource == "configmaps" && e.Verb == "create" &&
			strings.HasSuffix(e.ObjectRef.Name, "-runtime-snapshot") && t.snapshot == nil:
			t.snapshot = req
		case e.User.Username == managerUser && e.ObjectRef.Resource == "jobsets" && e.Verb == "patch" && t.jobSet == nil:
			t.jobSet = req
		}
	})
	return out, err
}

// webhookLatency is what the apiserver says the admission webhooks took, which it records on
// requests slower than 500 ms only.
func (e auditEvent) webhookLatency() time.Duration {
	var total time.Duration
	for _, key := range []string{"apiserver.latency.k8s.io/mutating-webhook", "apiserver.latency.k8s.io/validating-webhook"} {
		if d, err := time.ParseDuration(e.Annotations[key]); err == nil {
			total += d
		}
	}
	return total
}

// breakdown cuts each TrainJob's way into the stages; seen is when the harness saw each JobSet.
func breakdown(times map[string]*trainJobTimes, seen map[string]time.Time) *Breakdown {
	type row struct {
		total  float64
		stages []float64
	}
	var rows []row
	b := &Breakdown{}
	var webhookSum float64
	for name, t := range times {
		if t.create != nil && t.create.done.Sub(t.create.received) > 500*time.Millisecond {
			b.SlowCreates++
			webhookSum += millis(t.create.webhook)
		}
		js, ok := seen[name]
		if t.create == nil || t.snapshot == nil || t.jobSet == nil || !ok {
			continue
		}
		points := []time.Time{t.create.received, t.create.done, t.snapshot.received, t.snapshot.done, t.jobSet.received, t.jobSet.done, js}
		r := row{total: millis(js.Sub(t.create.done))}
		for i := 1; i < len(points); i++ {
			r.stages = append(r.stages, millis(points[i].Sub(points[i-1])))
		}
		rows = append(rows, r)
	}
	if b.SlowCreates > 0 {
		b.SlowCreateWebhookMean = webhookSum / float64(b.SlowCreates)
	}
	b.TrainJobs = len(rows)
	if len(rows) == 0 {
		return b
	}
	// The tail: the TrainJobs at or above the p99 of the way from the create's response on.
	slices.SortFunc(rows, func(a, b row) int { return cmpFloat(b.total, a.total) })
	b.Slowest = max(len(rows)-int(0.99*float64(len(rows))), 1)
	for i, name := range stageNames {
		all := make([]float64, len(rows))
		tail := 0.0
		for j, r := range rows {
			all[j] = r.stages[i]
			if j < b.Slowest {
				tail += r.stages[i]
			}
		}
		b.Stages = append(b.Stages, Stage{Name: name[0], Holds: name[1], Summary: summarize(all), SlowestMean: tail / float64(b.Slowest)})
	}
	return b
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// managerQueue fills the manager's TrainJob queue wait and reconcile time between two scrapes.
func (b *Breakdown) managerQueue(before, after metrics) {
	pick := func(label, value string) func(map[string]string) ([2]string, bool) {
		return func(l map[string]string) ([2]string, bool) { return [2]string{}, l[label] == value }
	}
	for _, h := range []struct {
		metric, label string
		into          *[2]float64
	}{
		{"workqueue_queue_duration_seconds", "name", &b.QueueWait},
		{"controller_runtime_reconcile_time_seconds", "controller", &b.Reconcile},
	} {
		d := bucketDelta(histograms(before, h.metric, pick(h.label, trainJobController)), histograms(after, h.metric, pick(h.label, trainJobController)))
		if buckets, ok := d[[2]string{}]; ok && buckets[len(buckets)-1].count > 0 {
			*h.into = [2]float64{1000 * quantile(0.5, buckets), 1000 * quantile(0.99, buckets)}
		}
	}
}
