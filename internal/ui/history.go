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
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// DefaultHistoryPoints bounds each job's series: a curve of ~2,000 points draws every detail a
// chart of a few hundred pixels can show, at a few bytes a point.
const DefaultHistoryPoints = 2000

// History keeps what status.trainerStatus said over time. The API keeps only the last report
// (each replaces it whole), so the UI samples every change its informer sees.
type History struct {
	mu   sync.RWMutex
	max  int
	jobs map[types.UID]*series
}

// NewHistory keeps up to max points per job.
func NewHistory(max int) *History {
	if max <= 0 {
		max = DefaultHistoryPoints
	}
	return &History{max: max, jobs: map[types.UID]*series{}}
}

// series is one job's history, stored by column so a point costs its numbers only (8 bytes of
// time, 2 of progress, 4 per metric): 1,000 jobs of 500 points fit in about 11 MiB.
type series struct {
	names   []string
	index   map[string]int
	at      []int64     // unix milliseconds of trainerStatus.lastUpdatedTime, increasing
	percent []int16     // -1 when not reported
	values  [][]float32 // values[metric][point]; NaN when the point lacks it or it is no number
}

func newSeries() *series { return &series{index: map[string]int{}} }

func (s *series) len() int { return len(s.at) }

// column adds a column for a new metric, NaN for the points before it.
func (s *series) column(name string) {
	if _, ok := s.index[name]; ok {
		return
	}
	col := make([]float32, len(s.at), cap(s.at))
	for i := range col {
		col[i] = nan
	}
	s.names = append(s.names, name)
	s.values = append(s.values, col)
	s.index[name] = len(s.names) - 1
}

var nan = float32(math.NaN())

// add appends a point; vals maps metric names (columns added before) to values.
func (s *series) add(at int64, percent int16, vals map[string]float32) {
	s.at = append(s.at, at)
	s.percent = append(s.percent, percent)
	for i, name := range s.names {
		v, ok := vals[name]
		if !ok {
			v = nan
		}
		s.values[i] = append(s.values[i], v)
	}
}

// Observe records the TrainJob's current report, once: the same report seen again (a resync,
// another status change) adds nothing. It reports whether a point was added.
func (h *History) Observe(tj *trainer.TrainJob) bool {
	ts := tj.Status.TrainerStatus
	if ts == nil || ts.LastUpdatedTime.IsZero() {
		return false
	}
	at := ts.LastUpdatedTime.UnixMilli()
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.jobs[tj.UID]
	if s == nil {
		s = newSeries()
		h.jobs[tj.UID] = s
	}
	if n := s.len(); n > 0 && at <= s.at[n-1] {
		return false
	}
	percent := int16(-1)
	if ts.ProgressPercentage != nil {
		percent = int16(*ts.ProgressPercentage)
	}
	vals := make(map[string]float32, len(ts.Metrics))
	for _, m := range ts.Metrics {
		s.column(m.Name) // columns in the order the metrics first appear
		v := nan
		if f, err := strconv.ParseFloat(m.Value, 64); err == nil {
			v = float32(f)
		}
		vals[m.Name] = v
	}
	s.add(at, percent, vals)
	if s.len() > h.max {
		s.thin(h.max)
	}
	return true
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

// Forget drops a deleted job's series.
func (h *History) Forget(uid types.UID) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.jobs, uid)
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
	if s == nil {
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

// persisted is the ConfigMap form of a series: gzip-compressed JSON, by column.
type persisted struct {
	Names   []string    `json:"names"`
	At      []int64     `json:"at"`
	Percent []int16     `json:"percent"`
	Values  [][]float32 `json:"values"` // by metric; absent values written as 0 and listed in Missing
	// Missing lists, per metric, the points that lack it (JSON has no NaN).
	Missing [][]int `json:"missing"`
}

// Encode returns a job's series, compressed, for its progress ConfigMap.
func (h *History) Encode(uid types.UID) ([]byte, error) {
	h.mu.RLock()
	var doc persisted
	if s := h.jobs[uid]; s != nil {
		doc.Names, doc.At, doc.Percent = slices.Clone(s.names), slices.Clone(s.at), slices.Clone(s.percent)
		for _, col := range s.values {
			vals := slices.Clone(col)
			var missing []int
			for i, v := range vals {
				if math.IsNaN(float64(v)) {
					vals[i] = 0
					missing = append(missing, i)
				}
			}
			doc.Values = append(doc.Values, vals)
			doc.Missing = append(doc.Missing, missing)
		}
	}
	h.mu.RUnlock()
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Restore loads a job's series from its ConfigMap. Points the informer recorded already are
// newer than the saved ones and are kept after them.
func (h *History) Restore(uid types.UID, data []byte) error {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("reading the progress history: %w", err)
	}
	var doc persisted
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		return fmt.Errorf("decoding the progress history: %w", err)
	}
	n := len(doc.At)
	if len(doc.Percent) != n || len(doc.Values) != len(doc.Names) || len(doc.Missing) > len(doc.Names) {
		return fmt.Errorf("the progress history is inconsistent: %d times, %d progress values, %d metrics, %d columns",
			n, len(doc.Percent), len(doc.Names), len(doc.Values))
	}
	s := &series{names: doc.Names, index: map[string]int{}, at: doc.At, percent: doc.Percent, values: doc.Values}
	for m, name := range doc.Names {
		s.index[name] = m
		if len(doc.Values[m]) != n {
			return fmt.Errorf("the progress history is inconsistent: metric %q has %d values for %d times", name, len(doc.Values[m]), n)
		}
		if m < len(doc.Missing) {
			for _, i := range doc.Missing[m] {
				if i >= 0 && i < n {
					s.values[m][i] = nan
				}
			}
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.jobs[uid]; cur != nil && cur.len() > 0 {
		s.merge(cur)
	}
	if s.len() > h.max {
		s.thin(h.max)
	}
	h.jobs[uid] = s
	return nil
}

// merge appends the points of newer that come after s's last one.
func (s *series) merge(newer *series) {
	first := newer.at[0]
	keep := s.len()
	for keep > 0 && s.at[keep-1] >= first {
		keep--
	}
	s.at, s.percent = s.at[:keep], s.percent[:keep]
	for m := range s.values {
		s.values[m] = s.values[m][:keep]
	}
	for _, name := range newer.names {
		s.column(name)
	}
	for i := range newer.at {
		vals := map[string]float32{}
		for m, name := range newer.names {
			if v := newer.values[m][i]; !math.IsNaN(float64(v)) {
				vals[name] = v
			}
		}
		s.add(newer.at[i], newer.percent[i], vals)
	}
}
