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

import "k8s.io/apimachinery/pkg/types"

// The memory budget. A series reserves its times and progress when its job first reports, and
// each metric's column when its name first appears, at the full length a series reaches
// (Points+1 values: a point is added before the series is thinned), so the budget bounds what
// the series can grow to, not only what they hold now. Past the budget, the series of the
// finished job that reported longest ago makes room; running jobs' series are never cut, so a job
// spamming names cannot take another's live curve. With no finished job left, the new series or
// name is refused and its values are counted (reason "memory").

// Estimated sizes beyond the numbers, which are counted exactly: a series' struct, its map entry
// and note, and per metric name the string, its map entry and the column's slice header.
const (
	seriesOverhead = 512
	nameOverhead   = 128
)

// baseCost is a series' reservation before any metric: its times (8 bytes) and progress (2).
func (l HistoryLimits) baseCost() int64 { return seriesOverhead + int64(l.Points+1)*(8+2) }

// columnCost is the reservation of one metric's column (4 bytes a point).
func (l HistoryLimits) columnCost(name string) int64 {
	return nameOverhead + int64(len(name)) + int64(l.Points+1)*4
}

// seriesCost is the reservation of a series with these metrics.
func (l HistoryLimits) seriesCost(names ...string) int64 {
	n := l.baseCost()
	for _, name := range names {
		n += l.columnCost(name)
	}
	return n
}

// reserve takes n bytes of the budget for s, making room if it must; it reports whether it
// could. The caller holds h.mu.
func (h *History) reserve(s *series, n int64) bool {
	if !h.makeRoom(n, s, nil) {
		return false
	}
	h.used += n
	s.reserved += n
	return true
}

// makeRoom evicts finished jobs' series, the one that reported longest ago first, until n more
// bytes for need fit the budget; it reports whether they do. It never evicts need or also (the
// series need replaces), a running job's series, nor, for a finished job, a newer one: a
// restarted UI restoring finished jobs' curves keeps the newest, not the last read.
func (h *History) makeRoom(n int64, need, also *series) bool {
	for h.used+n > h.limits.Bytes {
		var victim *series
		var victimUID types.UID
		for uid, s := range h.jobs {
			if s == need || s == also || !s.finished || s.reserved == 0 || (need.finished && s.seen >= need.seen) {
				continue
			}
			if victim == nil || s.seen < victim.seen || (s.seen == victim.seen && uid < victimUID) {
				victim, victimUID = s, uid
			}
		}
		if victim == nil {
			return false
		}
		h.used -= victim.reserved
		*victim = series{seen: victim.seen, finished: true, evicted: true, note: HistoryNote{Evicted: true}}
		h.evicted++
	}
	return true
}

// HistoryStats are the history's figures and counters, for /metrics.
type HistoryStats struct {
	// Jobs is how many jobs have points.
	Jobs int
	// Bytes is what the series reserved of Budget.
	Bytes, Budget int64
	// DroppedNames and DroppedMemory count values not kept: of a name beyond a job's limit, and
	// of a series or name the budget had no room for.
	DroppedNames, DroppedMemory int64
	// EvictedJobs counts finished jobs whose series made room.
	EvictedJobs int64
}

// Stats are the history's figures now.
func (h *History) Stats() HistoryStats {
	h.mu.RLock()
	defer h.mu.RUnlock()
	st := HistoryStats{Bytes: h.used, Budget: h.limits.Bytes, DroppedNames: h.droppedNames,
		DroppedMemory: h.droppedMemory, EvictedJobs: h.evicted}
	for _, s := range h.jobs {
		if s.len() > 0 {
			st.Jobs++
		}
	}
	return st
}

// HistoryCost is what a job's series with these metric names reserves of the budget within l
// (defaults filled in): what a benchmark may expect the history to hold.
func HistoryCost(l HistoryLimits, names ...string) int64 {
	return l.withDefaults().seriesCost(names...)
}
