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
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// jobReport is job uid's report at second sec: metric name and value pairs, and whether the job
// has finished by then.
func jobReport(uid types.UID, sec int, finished bool, metrics ...string) *trainer.TrainJob {
	tj := report(sec, nil, metrics...)
	tj.UID = uid
	if finished {
		tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
	}
	return tj
}

// newNames is n metric name and value pairs, all named anew: a job renaming its metrics at every
// report (the reproduction of issue 34 sent 256 of them a second).
func newNames(report, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("r%d-metric-%d", report, i), "1.5")
	}
	return out
}

func curveNames(h *History, uid types.UID) []string {
	var out []string
	for _, c := range h.Curves(uid) {
		out = append(out, c.Name)
	}
	return out
}

// TestHistoryMetricNameBound: a job's first names are charted, up to the limit; values of the
// names beyond it are dropped, counted, and the job's note says how many its last report had.
func TestHistoryMetricNameBound(t *testing.T) {
	var spam [][]string
	for i := range 20 {
		spam = append(spam, newNames(i, 256))
	}
	var first32 []string
	for i := range 32 {
		first32 = append(first32, fmt.Sprintf("r0-metric-%d", i))
	}
	cases := map[string]struct {
		limit       int
		reports     [][]string
		wantNames   []string
		wantNote    HistoryNote
		wantDropped int64
	}{
		"the first names are charted": {
			limit: 3, reports: [][]string{{"a", "1", "b", "1", "c", "1", "d", "1", "e", "1"}},
			wantNames: []string{"a", "b", "c"}, wantNote: HistoryNote{BeyondLimit: 2}, wantDropped: 2,
		},
		"names of later reports fill the limit": {
			limit: 3, reports: [][]string{{"a", "1", "b", "1"}, {"c", "1", "d", "1", "a", "2"}},
			wantNames: []string{"a", "b", "c"}, wantNote: HistoryNote{BeyondLimit: 1}, wantDropped: 1,
		},
		"a name beyond the limit stays beyond it": {
			limit: 2, reports: [][]string{{"a", "1", "b", "1", "c", "1"}, {"c", "1", "a", "1"}},
			wantNames: []string{"a", "b"}, wantNote: HistoryNote{BeyondLimit: 1}, wantDropped: 2,
		},
		"256 new names a second": {
			limit: 32, reports: spam,
			wantNames: first32, wantNote: HistoryNote{BeyondLimit: 256}, wantDropped: 256 - 32 + 19*256,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewBoundedHistory(HistoryLimits{Points: 100, MetricNames: tc.limit})
			for i, r := range tc.reports {
				h.Observe(jobReport("a", i, false, r...))
			}
			if diff := cmp.Diff(tc.wantNames, curveNames(h, "a")); diff != "" {
				t.Errorf("charted (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNote, h.Note("a")); diff != "" {
				t.Errorf("note (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDropped, h.Stats().DroppedNames); diff != "" {
				t.Errorf("dropped values (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestHistoryMemoryBudget: the budget holds two jobs of one metric. A running job's curve is
// never cut for another's: past the budget a new job or name is refused, unless a finished job's
// curves (the oldest first) make room.
func TestHistoryMemoryBudget(t *testing.T) {
	limits := HistoryLimits{Points: 10, MetricNames: 4}
	limits.Bytes = 2 * limits.seriesCost("loss")
	loss := func(uid types.UID, sec int, finished bool) *trainer.TrainJob {
		return jobReport(uid, sec, finished, "loss", "0.5")
	}
	cases := map[string]struct {
		reports     []*trainer.TrainJob
		wantPoints  map[types.UID]int
		wantNotes   map[types.UID]HistoryNote
		wantDropped int64
		wantEvicted int64
	}{
		"a new job is refused while running jobs fill the budget": {
			reports:     []*trainer.TrainJob{loss("a", 1, false), loss("b", 2, false), loss("c", 3, false), loss("a", 4, false)},
			wantPoints:  map[types.UID]int{"a": 2, "b": 1},
			wantNotes:   map[types.UID]HistoryNote{"c": {Refused: true}},
			wantDropped: 1,
		},
		"a running job's new name is refused, its curve goes on": {
			reports: []*trainer.TrainJob{loss("a", 1, false), loss("b", 2, false),
				jobReport("a", 3, false, "loss", "0.4", "accuracy", "0.6")},
			wantPoints:  map[types.UID]int{"a": 2, "b": 1},
			wantNotes:   map[types.UID]HistoryNote{"a": {OverBudget: 1}},
			wantDropped: 1,
		},
		"the oldest finished job makes room": {
			reports:     []*trainer.TrainJob{loss("a", 1, true), loss("b", 2, true), loss("c", 3, false)},
			wantPoints:  map[types.UID]int{"b": 1, "c": 1},
			wantNotes:   map[types.UID]HistoryNote{"a": {Evicted: true}},
			wantEvicted: 1,
		},
		"a running job is never evicted": {
			reports:     []*trainer.TrainJob{loss("a", 1, false), loss("b", 2, true), loss("c", 3, false), loss("d", 4, false)},
			wantPoints:  map[types.UID]int{"a": 1, "c": 1},
			wantNotes:   map[types.UID]HistoryNote{"b": {Evicted: true}, "d": {Refused: true}},
			wantDropped: 1, wantEvicted: 1,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewBoundedHistory(limits)
			for i, tj := range tc.reports {
				h.Observe(tj)
				if got := h.Stats().Bytes; got > limits.Bytes {
					t.Fatalf("after report %d the history holds %d bytes, over its budget of %d", i, got, limits.Bytes)
				}
			}
			points := map[types.UID]int{}
			notes := map[types.UID]HistoryNote{}
			for _, uid := range []types.UID{"a", "b", "c", "d"} {
				if n := h.Len(uid); n > 0 {
					points[uid] = n
				}
				if n := h.Note(uid); n != (HistoryNote{}) {
					notes[uid] = n
				}
			}
			if diff := cmp.Diff(tc.wantPoints, points); diff != "" {
				t.Errorf("points kept (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want,+got):\n%s", diff)
			}
			st := h.Stats()
			if diff := cmp.Diff([2]int64{tc.wantDropped, tc.wantEvicted}, [2]int64{st.DroppedMemory, st.EvictedJobs}); diff != "" {
				t.Errorf("[values dropped for memory, jobs evicted] (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestHistorySpammerStaysWithinBudget is the quick form of `make bench-ui-history` on the history
// alone: a job reporting 256 new names a second for five minutes next to one reporting its loss.
// The spammer's curves stay at the name limit, the honest job keeps every point, and the heap
// the history holds stays within what it accounts for.
func TestHistorySpammerStaysWithinBudget(t *testing.T) {
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	h := NewBoundedHistory(HistoryLimits{})
	for sec := range 300 {
		h.Observe(jobReport("spam", sec, false, newNames(sec, 256)...))
		h.Observe(jobReport("honest", sec, false, "loss", fmt.Sprint(1/float64(sec+1))))
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	st := h.Stats()
	t.Logf("the history accounts for %d bytes; the heap grew by %d", st.Bytes, held)
	if n := len(h.Curves("spam")); n > DefaultHistoryMetricNames {
		t.Errorf("the spammer has %d curves, over the limit of %d names", n, DefaultHistoryMetricNames)
	}
	if n := h.Len("honest"); n != 300 {
		t.Errorf("the honest job kept %d of its 300 points", n)
	}
	if st.Bytes > DefaultHistoryBytes || st.Bytes == 0 {
		t.Errorf("the history accounts for %d bytes, want some and at most its budget of %d", st.Bytes, DefaultHistoryBytes)
	}
	if held > 2*st.Bytes+1<<20 {
		t.Errorf("the heap grew by %d bytes, more than twice the %d the history accounts for", held, st.Bytes)
	}
	runtime.KeepAlive(h)
}

// gzipJSON is a history ConfigMap's data: doc as JSON, gzip-compressed.
func gzipJSON(t *testing.T, doc any) []byte {
	t.Helper()
	raw, ok := doc.([]byte)
	if !ok {
		var err error
		if raw, err = json.Marshal(doc); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// savedDoc is a saved history of points points (one a second) and the named metrics.
func savedDoc(points int, names ...string) persisted {
	doc := persisted{Names: names}
	for i := range points {
		doc.At = append(doc.At, ms(i))
		doc.Percent = append(doc.Percent, -1)
	}
	for range names {
		col := make([]float32, points)
		for i := range col {
			col[i] = float32(i)
		}
		doc.Values = append(doc.Values, col)
		doc.Missing = append(doc.Missing, nil)
	}
	return doc
}

// TestRestoreAppliesTheBounds: a history ConfigMap is input like any other (anyone who may
// write ConfigMaps in the namespace can forge one), so restoring it keeps the same bounds as
// recording: names, points and memory, and its decompressed size is bounded before it is read.
func TestRestoreAppliesTheBounds(t *testing.T) {
	limits := HistoryLimits{Points: 100, MetricNames: 3, Bytes: DefaultHistoryBytes}
	bomb := append([]byte(`{"names":[],"at":[`), bytes.Repeat([]byte("0,"), 3<<20)...)
	bomb = append(bomb, []byte(`0],"percent":[],"values":[]}`)...)
	unordered := savedDoc(3, "loss")
	unordered.At[1], unordered.At[2] = unordered.At[2], unordered.At[1]
	cases := map[string]struct {
		data        []byte
		limits      HistoryLimits
		wantErr     string
		wantNames   []string
		wantPoints  int
		wantDropped int64
	}{
		"names beyond the limit are not restored": {
			data: gzipJSON(t, savedDoc(10, "m0", "m1", "m2", "m3", "m4")), limits: limits,
			wantNames: []string{"m0", "m1", "m2"}, wantPoints: 10, wantDropped: 20,
		},
		"points beyond the bound are thinned": {
			data: gzipJSON(t, savedDoc(5000, "loss")), limits: limits,
			wantNames: []string{"loss"}, wantPoints: 100,
		},
		"over the memory budget": {
			data: gzipJSON(t, savedDoc(10, "loss")), limits: HistoryLimits{Points: 100, MetricNames: 3, Bytes: 100},
			wantErr: "not restored: the progress history is at its memory budget",
		},
		"a gzip bomb": {
			data: gzipJSON(t, bomb), limits: limits,
			wantErr: "decompresses to more than 4 MiB",
		},
		"times out of order": {
			data: gzipJSON(t, unordered), limits: limits,
			wantErr: "times out of order",
		},
		"a name twice": {
			data: gzipJSON(t, savedDoc(3, "loss", "loss")), limits: limits,
			wantErr: `metric "loss" appears twice`,
		},
		"a name longer than the API allows": {
			data: gzipJSON(t, savedDoc(3, strings.Repeat("x", 65))), limits: limits,
			wantErr: "a metric name of 65 characters",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := NewBoundedHistory(tc.limits)
			err := h.Restore("a", tc.data)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Restore = %v, want an error containing %q", err, tc.wantErr)
				}
				if h.Len("a") != 0 || h.Stats().Bytes != 0 {
					t.Errorf("a refused history left %d points, %d bytes", h.Len("a"), h.Stats().Bytes)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNames, curveNames(h, "a")); diff != "" {
				t.Errorf("restored curves (-want,+got):\n%s", diff)
			}
			if got := h.Len("a"); got > tc.wantPoints || got < tc.wantPoints/2 {
				t.Errorf("restored %d points, want at most %d", got, tc.wantPoints)
			}
			if got := h.Stats(); got.DroppedNames != tc.wantDropped || got.Bytes > tc.limits.Bytes {
				t.Errorf("dropped %d values (want %d), holds %d bytes (budget %d)", got.DroppedNames, tc.wantDropped, got.Bytes, tc.limits.Bytes)
			}
		})
	}
}

// TestDefaultBudgetHoldsTheMeasuredScale: the default budget keeps the curves of the 1,000 jobs
// of three metrics the UI is measured with (test/integration/ui), each at its full length, so a
// restarted UI restores them all.
func TestDefaultBudgetHoldsTheMeasuredScale(t *testing.T) {
	perJob := HistoryCost(HistoryLimits{}, "loss", "accuracy", "lr")
	if got := 1000 * perJob; got > DefaultHistoryBytes {
		t.Errorf("1,000 jobs of three metrics reserve %d bytes (%d each), over the default budget of %d", got, perJob, DefaultHistoryBytes)
	}
}
