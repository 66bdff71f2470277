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
	"math"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// DefaultHistoryPoints bounds each job's series: a curve of ~2,000 points draws every detail a
// chart of a few hundred pixels can show, at a few bytes a point.
const DefaultHistoryPoints = 2000

// DefaultHistoryMetricNames bounds the metric names charted per job: training reports a handful
// (loss, accuracy, learning rate, throughput), and a job that names its metrics anew at every
// report (issue 34: 256 new names a second) gets no more columns than this.
const DefaultHistoryMetricNames = 32

// DefaultHistoryBytes is the memory budget of every series together. 48 MiB holds the 1,000 jobs
// of three metrics the UI is measured with, at their full 2,000 points (45 KB each), or 177 jobs
// at the full 32 names of 64 characters (283 KB each), within the chart's 128 MiB limit beside the
// informers and the mapped code.
const DefaultHistoryBytes = 48 << 20

// HistoryLimits bound the history; a zero field takes its default.
type HistoryLimits struct {
	// Points is the most points a job's series keeps (--history-points).
	Points int
	// MetricNames is the most metric names charted per job, the first it reports
	// (--history-metric-names).
	MetricNames int
	// Bytes is the memory budget of every series together (--history-memory).
	Bytes int64
}

func (l HistoryLimits) withDefaults() HistoryLimits {
	if l.Points <= 0 {
		l.Points = DefaultHistoryPoints
	}
	if l.MetricNames <= 0 {
		l.MetricNames = DefaultHistoryMetricNames
	}
	if l.Bytes <= 0 {
		l.Bytes = DefaultHistoryBytes
	}
	return l
}

// History keeps what status.trainerStatus said over time. The API keeps only the last report
// (each replaces it whole), so the UI samples every change its informer sees, within its limits.
type History struct {
	mu     sync.RWMutex
	limits HistoryLimits
	jobs   map[types.UID]*series
	// used is what the series reserved of limits.Bytes (history_budget.go).
	used int64
	// Values not kept, by reason, and finished jobs whose series made room: /metrics.
	droppedNames, droppedMemory, evicted int64
}

// NewHistory keeps up to points points per job, within the default limits otherwise.
func NewHistory(points int) *History { return NewBoundedHistory(HistoryLimits{Points: points}) }

// NewBoundedHistory keeps within l.
func NewBoundedHistory(l HistoryLimits) *History {
	return &History{limits: l.withDefaults(), jobs: map[types.UID]*series{}}
}

// Limits are the history's bounds, defaults filled in.
func (h *History) Limits() HistoryLimits { return h.limits }

// series is one job's history, stored by column so a point costs its numbers only (8 bytes of
// time, 2 of progress, 4 per metric): 1,000 jobs of 500 points of 3 metrics fit in 8.5 MiB.
type series struct {
	names   []string
	index   map[string]int
	at      []int64     // unix milliseconds of trainerStatus.lastUpdatedTime, increasing
	percent []int16     // -1 when not reported
	values  [][]float32 // values[metric][point]; NaN when the point lacks it or it is no number
	// seen is the time of the last report observed, kept or not: a report seen again (a resync,
	// another status change) is neither kept nor counted twice.
	seen int64
	// reserved is what the series holds of the budget: each column at its full length, reserved
	// when its name first appears, so a curve once charted always has room for its next points.
	reserved int64
	// finished: the job completed or failed, so its series may make room for a running job's.
	finished bool
	evicted  bool
	note     HistoryNote
}

func (s *series) len() int { return len(s.at) }

// column adds a column for a new metric, NaN for the points before it.
func (s *series) column(name string) {
	col := make([]float32, len(s.at), cap(s.at))
	for i := range col {
		col[i] = nan
	}
	s.names = append(s.names, name)
	s.values = append(s.values, col)
	s.index[name] = len(s.names) - 1
}

var nan = float32(math.NaN())

// add appends a point; vals maps metric names (columns added before) to values. No slice grows
// past capacity, the length a series reaches before it is thinned, so its reservation holds.
func (s *series) add(at int64, percent int16, vals map[string]float32, capacity int) {
	s.at = appendCapped(s.at, at, capacity)
	s.percent = appendCapped(s.percent, percent, capacity)
	for i, name := range s.names {
		v, ok := vals[name]
		if !ok {
			v = nan
		}
		s.values[i] = appendCapped(s.values[i], v, capacity)
	}
}

// appendCapped appends x, growing xs by doubling but never beyond capacity elements (append's
// own growth would reach 2,560 for a series of 2,001).
func appendCapped[T any](xs []T, x T, capacity int) []T {
	if len(xs) == cap(xs) {
		grown := make([]T, len(xs), max(min(max(2*cap(xs), 16), capacity), len(xs)+1))
		copy(grown, xs)
		xs = grown
	}
	return append(xs, x)
}

// Observe records the TrainJob's current report, once: the same report seen again (a resync,
// another status change) adds nothing. It reports whether a point was added. Metric names beyond
// the job's first MetricNames, and new series or names the budget has no room for, are not
// charted: their values are counted as dropped and the job's note says how many.
func (h *History) Observe(tj *trainer.TrainJob) bool {
	ts := tj.Status.TrainerStatus
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.jobs[tj.UID]
	if s != nil {
		s.finished = finished(tj)
	}
	if ts == nil || ts.LastUpdatedTime.IsZero() || (s != nil && s.evicted) {
		return false
	}
	at := ts.LastUpdatedTime.UnixMilli()
	if s == nil {
		s = &series{index: map[string]int{}, finished: finished(tj), seen: math.MinInt64}
		h.jobs[tj.UID] = s
	}
	if at <= s.seen {
		return false
	}
	s.seen = at
	if s.reserved == 0 && !h.reserve(s, h.limits.baseCost()) {
		s.note = HistoryNote{Refused: true}
		h.droppedMemory += int64(len(ts.Metrics))
		if ts.ProgressPercentage != nil {
			h.droppedMemory++
		}
		return false
	}
	percent := int16(-1)
	if ts.ProgressPercentage != nil {
		percent = int16(*ts.ProgressPercentage)
	}
	var note HistoryNote
	vals := make(map[string]float32, min(len(ts.Metrics), h.limits.MetricNames))
	for _, m := range ts.Metrics {
		if !h.admit(s, m.Name, &note) {
			continue // columns in the order the metrics first appear
		}
		v := nan
		if f, err := strconv.ParseFloat(m.Value, 64); err == nil {
			v = float32(f)
		}
		vals[m.Name] = v
	}
	s.add(at, percent, vals, h.limits.Points+1)
	if s.len() > h.limits.Points {
		s.thin(h.limits.Points)
	}
	s.note = note
	return true
}

// admit reports whether name is charted for s: already, or as a new column within the job's
// name limit and the budget. A name that is not is counted in note and the dropped values.
func (h *History) admit(s *series, name string, note *HistoryNote) bool {
	if _, ok := s.index[name]; ok {
		return true
	}
	if len(s.names) >= h.limits.MetricNames {
		note.BeyondLimit++
		h.droppedNames++
		return false
	}
	if !h.reserve(s, h.limits.columnCost(name)) {
		note.OverBudget++
		h.droppedMemory++
		return false
	}
	s.column(name)
	return true
}

// finished reports whether the job completed or failed.
func finished(tj *trainer.TrainJob) bool {
	return meta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) ||
		meta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobFailed)
}

// thin drops every second point of the older half until the series fits in max: the curve
// keeps its whole span at a coarser step, instead of forgetting how training began.
func (s *series) thin(max int) {
	for s.len() > max {
		half := s.len() / 2
		keep := func(i int) bool { return i >= half || i%2 == 0 }
		s.at = filter(s.at, keep)
		s.percent = filter(s.percent, keep)
		for m := range s.values {
			s.values[m] = filter(s.values[m], keep)
		}
	}
}

func filter[T any](xs []T, keep func(int) bool) []T {
	out := xs[:0]
	for i, x := range xs {
		if keep(i) {
			out = append(out, x)
		}
	}
	return out
}

// Forget drops a deleted job's series and gives back its share of the budget.
func (h *History) Forget(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.jobs[uid]; s != nil {
		h.used -= s.reserved
		delete(h.jobs, uid)
	}
}

// Curve is one chart: a metric (or "progress") over time.
type Curve struct {
	Name   string    `json:"name"`
	Times  []int64   `json:"t"` // unix milliseconds
	Values []float64 `json:"v"`
}

// Curves returns the job's progress curve (when reported) and one curve per numeric metric,
// in the order the metrics first appeared. Points without a value are left out of a curve.
func (h *History) Curves(uid types.UID) []Curve {
	h.mu.RLock()
	defer h.mu.RUnlock()
	s := h.jobs[uid]
	if s == nil || s.len() == 0 {
		return nil
	}
	var out []Curve
	progress := Curve{Name: "progress"}
	for i, p := range s.percent {
		if p >= 0 {
			progress.Times = append(progress.Times, s.at[i])
			progress.Values = append(progress.Values, float64(p))
		}
	}
	if len(progress.Times) > 0 {
		out = append(out, progress)
	}
	for m, name := range s.names {
		c := Curve{Name: name}
		for i, v := range s.values[m] {
			if !math.IsNaN(float64(v)) {
				c.Times = append(c.Times, s.at[i])
				c.Values = append(c.Values, roundFloat32(v))
			}
		}
		if len(c.Times) > 0 {
			out = append(out, c)
		}
	}
	return out
}

// roundFloat32 prints a float32 as its shortest decimal, not as float64's view of it
// (0.1 stays 0.1, not 0.10000000149011612).
func roundFloat32(v float32) float64 {
	f, _ := strconv.ParseFloat(strconv.FormatFloat(float64(v), 'g', -1, 32), 64)
	return f
}

// Len is the number of points kept for a job.
func (h *History) Len(uid types.UID) int {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if s := h.jobs[uid]; s != nil {
		return s.len()
	}
	return 0
}

// HistoryNote says what the history does not chart of a job, for its Progress tab: the user is
// told, rather than left to think the values were lost.
type HistoryNote struct {
	// BeyondLimit is how many metrics of the job's last report are not charted because the job
	// reported more names than MetricNames.
	BeyondLimit int
	// OverBudget is how many metrics of its last report are not charted because the history was
	// at its memory budget when their names first appeared.
	OverBudget int
	// Refused: the job has no curves, as the history was at its budget when it first reported.
	Refused bool
	// Evicted: the finished job's curves were dropped to make room for a running job's.
	Evicted bool
}

// Note is what the history does not chart of a job.
func (h *History) Note(uid types.UID) HistoryNote {
	h.mu.RLock()
	defer h.mu.RUnlock()
	if s := h.jobs[uid]; s != nil {
		return s.note
	}
	return HistoryNote{}
}
