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
	"errors"
	"fmt"
	"io"
	"math"
	"slices"

	"k8s.io/apimachinery/pkg/types"
)

// persisted is the ConfigMap form of a series: gzip-compressed JSON, by column.
type persisted struct {
	Names   []string    `json:"names"`
	At      []int64     `json:"at"`
	Percent []int16     `json:"percent"`
	Values  [][]float32 `json:"values"` // by metric; absent values written as 0 and listed in Missing
	// Missing lists, per metric, the points that lack it (JSON has no NaN).
	Missing [][]int32 `json:"missing"`
}

// maxHistoryJSON bounds a saved history once decompressed. A ConfigMap holds at most 1 MiB, but
// gzip packs a thousand times more into it (a forged "0,0,0,..."); a series within the default
// limits is under 1.5 MiB of JSON, and one saved before the name limit had to fit the ConfigMap
// compressed. Decoding costs up to about four times the JSON, once, at start.
const maxHistoryJSON = 4 << 20

// maxMetricName is the API's bound on a metric's name (trainer.Metric).
const maxMetricName = 64

// errHistoryFull is a saved series the budget has no room for.
var errHistoryFull = errors.New("not restored: the progress history is at its memory budget (--history-memory)")

// Encode returns a job's series, compressed, for its progress ConfigMap.
func (h *History) Encode(uid types.UID) ([]byte, error) {
	h.mu.RLock()
	var doc persisted
	if s := h.jobs[uid]; s != nil {
		doc.Names, doc.At, doc.Percent = slices.Clone(s.names), slices.Clone(s.at), slices.Clone(s.percent)
		for _, col := range s.values {
			vals := slices.Clone(col)
			var missing []int32
			for i, v := range vals {
				if math.IsNaN(float64(v)) {
					vals[i] = 0
					missing = append(missing, int32(i))
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

// Restore loads a job's series from its ConfigMap, within the same limits as Observe: anyone who
// may write ConfigMaps in the namespace can forge one. Points the informer recorded already are
// newer than the saved ones and are kept after them. A job the informer has not shown is taken
// as finished (its series may make room for a running job's) until it reports.
func (h *History) Restore(uid types.UID, data []byte) error {
	doc, err := decodeHistory(data)
	if err != nil {
		return err
	}
	s, dropped := h.limits.seriesFrom(doc)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.droppedNames += dropped
	cur := h.jobs[uid]
	s.finished = true
	if cur != nil {
		if cur.evicted {
			return nil
		}
		s.finished, s.note = cur.finished, cur.note
		s.seen = max(s.seen, cur.seen)
		if cur.len() > 0 {
			h.droppedNames += s.merge(cur, h.limits)
		}
	}
	if s.len() > h.limits.Points {
		s.thin(h.limits.Points)
	}
	s.compact()
	held := int64(0)
	if cur != nil {
		held = cur.reserved
	}
	h.used -= held
	cost := h.limits.seriesCost(s.names...)
	if !h.makeRoom(cost, s, cur) {
		h.used += held
		h.droppedMemory += s.count()
		return errHistoryFull
	}
	h.used += cost
	s.reserved = cost
	h.jobs[uid] = s
	return nil
}

// decodeHistory reads a saved series, decompressing at most maxHistoryJSON, and checks it is one
// Observe could have written.
func decodeHistory(data []byte) (*persisted, error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading the progress history: %w", err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, maxHistoryJSON+1))
	if err != nil {
		return nil, fmt.Errorf("reading the progress history: %w", err)
	}
	if len(raw) > maxHistoryJSON {
		return nil, fmt.Errorf("the progress history decompresses to more than %d MiB: not restored", maxHistoryJSON>>20)
	}
	var doc persisted
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("decoding the progress history: %w", err)
	}
	return &doc, doc.validate()
}

func (doc *persisted) validate() error {
	n := len(doc.At)
	if len(doc.Percent) != n || len(doc.Values) != len(doc.Names) || len(doc.Missing) > len(doc.Names) {
		return fmt.Errorf("the progress history is inconsistent: %d times, %d progress values, %d metrics, %d columns",
			n, len(doc.Percent), len(doc.Names), len(doc.Values))
	}
	for i := 1; i < n; i++ {
		if doc.At[i] <= doc.At[i-1] {
			return fmt.Errorf("the progress history is inconsistent: its times out of order at point %d", i)
		}
	}
	seen := make(map[string]bool, len(doc.Names))
	for m, name := range doc.Names {
		if name == "" || len(name) > maxMetricName {
			return fmt.Errorf("the progress history has a metric name of %d characters; the API allows 1 to %d", len(name), maxMetricName)
		}
		if seen[name] {
			return fmt.Errorf("the progress history is inconsistent: metric %q appears twice", name)
		}
		seen[name] = true
		if len(doc.Values[m]) != n {
			return fmt.Errorf("the progress history is inconsistent: metric %q has %d values for %d times", name, len(doc.Values[m]), n)
		}
	}
	return nil
}

// seriesFrom is the series of a checked document with its first MetricNames names, and how many
// values the names beyond them held.
func (l HistoryLimits) seriesFrom(doc *persisted) (*series, int64) {
	n := len(doc.At)
	keep := min(len(doc.Names), l.MetricNames)
	var dropped int64
	for m := keep; m < len(doc.Names); m++ {
		missing := 0
		if m < len(doc.Missing) {
			missing = len(doc.Missing[m])
		}
		dropped += int64(max(n-missing, 0))
	}
	s := &series{names: slices.Clone(doc.Names[:keep]), index: map[string]int{}, at: doc.At, percent: doc.Percent,
		values: doc.Values[:keep], seen: math.MinInt64}
	if n > 0 {
		s.seen = doc.At[n-1]
	}
	for m, name := range s.names {
		s.index[name] = m
		if m < len(doc.Missing) {
			for _, i := range doc.Missing[m] {
				if i >= 0 && int(i) < n {
					s.values[m][i] = nan
				}
			}
		}
	}
	return s, dropped
}

// merge appends the points of newer that come after s's last one, within l's name limit; it
// returns how many of newer's values found no column.
func (s *series) merge(newer *series, l HistoryLimits) int64 {
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
		if _, ok := s.index[name]; !ok && len(s.names) < l.MetricNames {
			s.column(name)
		}
	}
	var dropped int64
	for i := range newer.at {
		vals := map[string]float32{}
		for m, name := range newer.names {
			if v := newer.values[m][i]; !math.IsNaN(float64(v)) {
				if _, ok := s.index[name]; ok {
					vals[name] = v
				} else {
					dropped++
				}
			}
		}
		s.add(newer.at[i], newer.percent[i], vals, max(cap(s.at), l.Points+1))
	}
	return dropped
}

// compact copies the series into slices of its own length, so the arrays a decoded document
// grew (maybe far past the bound before it was thinned) are freed; Observe grows them again
// within the reservation.
func (s *series) compact() {
	s.at, s.percent = clip(s.at), clip(s.percent)
	for m := range s.values {
		s.values[m] = clip(s.values[m])
	}
	s.names, s.values = clip(s.names), clip(s.values)
}

func clip[T any](xs []T) []T {
	out := make([]T, len(xs))
	copy(out, xs)
	return out
}

// count is how many values the series holds: progress reports and metrics' values.
func (s *series) count() int64 {
	var n int64
	for _, p := range s.percent {
		if p >= 0 {
			n++
		}
	}
	for _, col := range s.values {
		for _, v := range col {
			if !math.IsNaN(float64(v)) {
				n++
			}
		}
	}
	return n
}
