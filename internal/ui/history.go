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
// chart of a few hundred pixels can show, at tens of bytes a point.
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

// series is one job's history, compact: metric names once, one float32 per metric per point.
type series struct {
	names  []string
	index  map[string]int
	points []point // oldest first; at most max
}

type point struct {
	at      int64     // unix milliseconds of trainerStatus.lastUpdatedTime
	percent int16     // -1 when not reported
	values  []float32 // by names index; NaN when the point lacks the metric or it is not a number
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
		s = &series{index: map[string]int{}}
		h.jobs[tj.UID] = s
	}
	if n := len(s.points); n > 0 && at <= s.points[n-1].at {
		return false
	}
	p := point{at: at, percent: -1}
	if ts.ProgressPercentage != nil {
		p.percent = int16(*ts.ProgressPercentage)
	}
	for _, m := range ts.Metrics {
		i, ok := s.index[m.Name]
		if !ok {
			i = len(s.names)
			s.names = append(s.names, m.Name)
			s.index[m.Name] = i
		}
		for len(p.values) <= i {
			p.values = append(p.values, float32(math.NaN()))
		}
		if f, err := strconv.ParseFloat(m.Value, 64); err == nil {
			p.values[i] = float32(f)
		}
	}
	s.points = append(s.points, p)
	if len(s.points) > h.max {
		// Halve the oldest half: the curve keeps its whole span at a coarser step, instead of
		// forgetting how training began.
		s.points = thin(s.points, h.max)
	}
	return true
}

// thin drops every second point of the older half until the series fits in max.
func thin(ps []point, max int) []point {
	for len(ps) > max {
		half := len(ps) / 2
		kept := ps[:0:0]
		for i := 0; i < half; i += 2 {
			kept = append(kept, ps[i])
		}
		ps = append(kept, ps[half:]...)
	}
	return ps
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
	progress := Curve{Name: "progress"}
	metrics := make([]Curve, len(s.names))
	for i, n := range s.names {
		metrics[i].Name = n
	}
	for _, p := range s.points {
		if p.percent >= 0 {
			progress.Times = append(progress.Times, p.at)
			progress.Values = append(progress.Values, float64(p.percent))
		}
		for i, v := range p.values {
			if !math.IsNaN(float64(v)) {
				metrics[i].Times = append(metrics[i].Times, p.at)
				metrics[i].Values = append(metrics[i].Values, roundFloat32(v))
			}
		}
	}
	var out []Curve
	if len(progress.Times) > 0 {
		out = append(out, progress)
	}
	for _, m := range metrics {
		if len(m.Times) > 0 {
			out = append(out, m)
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
		return len(s.points)
	}
	return 0
}

// persisted is the ConfigMap form of a series: gzip-compressed JSON.
type persisted struct {
	Names   []string    `json:"names"`
	At      []int64     `json:"at"`
	Percent []int16     `json:"percent"`
	Values  [][]float32 `json:"values"`
	// Missing lists, per point, the metrics it lacks (JSON has no NaN; they are written as 0).
	Missing [][]int `json:"missing,omitempty"`
}

// Encode returns a job's series, compressed, for its progress ConfigMap.
func (h *History) Encode(uid types.UID) ([]byte, error) {
	h.mu.RLock()
	s := h.jobs[uid]
	var doc persisted
	if s != nil {
		doc.Names = slices.Clone(s.names)
		for _, p := range s.points {
			doc.At = append(doc.At, p.at)
			doc.Percent = append(doc.Percent, p.percent)
			vals := make([]float32, len(p.values))
			var missing []int
			for i, v := range p.values {
				if math.IsNaN(float64(v)) {
					missing = append(missing, i)
					continue
				}
				vals[i] = v
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
	if len(doc.Percent) != len(doc.At) || len(doc.Values) != len(doc.At) {
		return fmt.Errorf("the progress history is inconsistent: %d times, %d progress values, %d metric rows", len(doc.At), len(doc.Percent), len(doc.Values))
	}
	s := &series{names: doc.Names, index: map[string]int{}}
	for i, n := range doc.Names {
		s.index[n] = i
	}
	for i, at := range doc.At {
		p := point{at: at, percent: doc.Percent[i], values: doc.Values[i]}
		if i < len(doc.Missing) {
			for _, m := range doc.Missing[i] {
				if m >= 0 && m < len(p.values) {
					p.values[m] = float32(math.NaN())
				}
			}
		}
		s.points = append(s.points, p)
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if cur := h.jobs[uid]; cur != nil && len(cur.points) > 0 {
		first := cur.points[0].at
		n := len(s.points)
		for n > 0 && s.points[n-1].at >= first {
			n--
		}
		merged := &series{names: s.names, index: s.index, points: s.points[:n]}
		for _, p := range cur.points {
			merged.points = append(merged.points, remap(p, cur.names, merged))
		}
		s = merged
	}
	if len(s.points) > h.max {
		s.points = thin(s.points, h.max)
	}
	h.jobs[uid] = s
	return nil
}

// remap moves a point's values from names to the indexes of s, adding names s lacks.
func remap(p point, names []string, s *series) point {
	out := point{at: p.at, percent: p.percent}
	for i, v := range p.values {
		j, ok := s.index[names[i]]
		if !ok {
			j = len(s.names)
			s.names = append(s.names, names[i])
			s.index[names[i]] = j
		}
		for len(out.values) <= j {
			out.values = append(out.values, float32(math.NaN()))
		}
		out.values[j] = v
	}
	return out
}
