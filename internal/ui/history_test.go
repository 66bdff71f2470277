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
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

var t0 = time.Date(2026, 12, 4, 10, 0, 0, 0, time.UTC)

// report is a progress report of job "a", sec seconds after t0.
func report(sec int, percent *int32, metrics ...string) *trainer.TrainJob {
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{UID: "a"}}
	ts := &trainer.TrainJobTrainerStatus{ProgressPercentage: percent, LastUpdatedTime: metav1.NewTime(t0.Add(time.Duration(sec) * time.Second))}
	for i := 0; i+1 < len(metrics); i += 2 {
		ts.Metrics = append(ts.Metrics, trainer.Metric{Name: metrics[i], Value: metrics[i+1]})
	}
	tj.Status.TrainerStatus = ts
	return tj
}

func ms(sec int) int64 { return t0.Add(time.Duration(sec) * time.Second).UnixMilli() }

func TestHistoryCurves(t *testing.T) {
	h := NewHistory(100)
	steps := []struct {
		tj   *trainer.TrainJob
		want bool
	}{
		{report(1, ptr.To[int32](10), "loss", "2.0", "lr", "0.1"), true},
		{report(1, ptr.To[int32](10), "loss", "2.0", "lr", "0.1"), false}, // the same report again
		{report(2, ptr.To[int32](20), "loss", "1.5", "note", "warmup"), true},
		{report(3, nil, "loss", "0.1", "accuracy", "0.9"), true},
		{report(2, ptr.To[int32](99), "loss", "9"), false}, // older than the last
		{&trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{UID: "a"}}, false},
	}
	for i, s := range steps {
		if got := h.Observe(s.tj); got != s.want {
			t.Errorf("step %d: Observe = %v, want %v", i, got, s.want)
		}
	}
	want := []Curve{
		{Name: "progress", Times: []int64{ms(1), ms(2)}, Values: []float64{10, 20}},
		{Name: "loss", Times: []int64{ms(1), ms(2), ms(3)}, Values: []float64{2, 1.5, 0.1}},
		{Name: "lr", Times: []int64{ms(1)}, Values: []float64{0.1}},
		{Name: "accuracy", Times: []int64{ms(3)}, Values: []float64{0.9}},
	}
	if diff := cmp.Diff(want, h.Curves("a")); diff != "" {
		t.Errorf("Curves (-want +got):\n%s", diff)
	}
	if h.Curves("b") != nil {
		t.Error("curves of an unknown job")
	}
}

// TestHistoryBounded: past the bound, the older half is thinned, so the curve keeps its start.
func TestHistoryBounded(t *testing.T) {
	h := NewHistory(10)
	for i := range 25 {
		h.Observe(report(i, ptr.To(int32(i))))
	}
	c := h.Curves("a")[0]
	if h.Len("a") > 10 || c.Times[0] != ms(0) || c.Times[len(c.Times)-1] != ms(24) {
		t.Errorf("kept %d points from %v to %v; want at most 10 from the first to the last report",
			h.Len("a"), time.UnixMilli(c.Times[0]), time.UnixMilli(c.Times[len(c.Times)-1]))
	}
	for i := 1; i < len(c.Times); i++ {
		if c.Times[i] <= c.Times[i-1] {
			t.Fatalf("times out of order: %v", c.Times)
		}
	}
	h.Forget("a")
	if h.Len("a") != 0 {
		t.Error("Forget kept points")
	}
}

func TestHistoryPersistence(t *testing.T) {
	h := NewHistory(100)
	for i := range 20 {
		h.Observe(report(i, ptr.To(int32(i*5)), "loss", fmt.Sprint(2.0-float64(i)*0.1)))
	}
	h.Observe(report(20, nil, "accuracy", "0.5")) // a point without loss
	data, err := h.Encode("a")
	if err != nil {
		t.Fatal(err)
	}
	restored := NewHistory(100)
	// The informer saw one newer report before the ConfigMap was read.
	restored.Observe(report(21, ptr.To[int32](100), "loss", "0.05"))
	if err := restored.Restore("a", data); err != nil {
		t.Fatal(err)
	}
	h.Observe(report(21, ptr.To[int32](100), "loss", "0.05"))
	if diff := cmp.Diff(h.Curves("a"), restored.Curves("a")); diff != "" {
		t.Errorf("restored curves (-want +got):\n%s", diff)
	}
	if got := restored.Curves("a")[1].Values[19]; got != 0.1 {
		t.Errorf("20th loss = %v, want 0.1", got)
	}
	if err := restored.Restore("b", []byte("not gzip")); err == nil {
		t.Error("Restore accepted garbage")
	}
}

// BenchmarkHistoryMemory measures the heap of 1,000 jobs × 500 points of progress and three
// metrics, the UI's memory budget case (go test -bench HistoryMemory -run ^$ ./internal/ui).
func BenchmarkHistoryMemory(b *testing.B) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		h := NewHistory(DefaultHistoryPoints)
		for j := range 1000 {
			uid := types.UID(fmt.Sprintf("job-%d", j))
			for i := range 500 {
				tj := report(i, ptr.To(int32(i/5)), "loss", fmt.Sprint(2.0/float64(i+1)), "accuracy", "0.5", "lr", "1e-4")
				tj.UID = uid
				h.Observe(tj)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MiB")
		runtime.KeepAlive(h)
	}
}
