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
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestFitMemory(t *testing.T) {
	cases := map[string]struct {
		points []ScalePoint
		want   MemoryFit
	}{
		"none": {},
		"only the start: nothing to fit": {
			points: []ScalePoint{{Settled: 0, RSSMiB: 50, HeapMiB: 12}},
		},
		"one wave: flat through it": {
			points: []ScalePoint{{Settled: 0, RSSMiB: 30, HeapMiB: 5}, {Settled: 1000, RSSMiB: 50, HeapMiB: 12}},
			want:   MemoryFit{Points: 1, RSSInterceptMiB: 50, HeapInterceptMiB: 12},
		},
		"exact line: 8 KiB and 4 KiB per TrainJob; the start's warm-up left out": {
			points: []ScalePoint{
				{Settled: 0, RSSMiB: 20, HeapMiB: 3},
				{Settled: 1024, RSSMiB: 58, HeapMiB: 16},
				{Settled: 2048, RSSMiB: 66, HeapMiB: 20},
				{Settled: 3072, RSSMiB: 74, HeapMiB: 24},
			},
			want: MemoryFit{Points: 3, RSSKiBPerTrainJob: 8, RSSInterceptMiB: 50, HeapKiBPerTrainJob: 4, HeapInterceptMiB: 12},
		},
		"noise around a line: the least-squares slope": {
			points: []ScalePoint{
				{Settled: 1024, RSSMiB: 59},
				{Settled: 2048, RSSMiB: 65},
				{Settled: 3072, RSSMiB: 75},
			},
			// slope (75-59)/2048 MiB = 8 KiB; intercept (199 - 8/1024*6144)/3 = 50.33 MiB.
			want: MemoryFit{Points: 3, RSSKiBPerTrainJob: 8, RSSInterceptMiB: 50.333333333333336},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, fitMemory(tc.points), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("fitMemory (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMemoryFitLine(t *testing.T) {
	cases := map[string]struct {
		fit  MemoryFit
		want string
	}{
		"one wave: no slope claimed": {
			fit:  MemoryFit{Points: 1, RSSInterceptMiB: 53.9, HeapInterceptMiB: 13.3},
			want: "Memory per settled TrainJob: not fitted, 1 sample(s) after the first wave; it needs two waves or more (-wave below -n).",
		},
		"three waves": {
			fit:  MemoryFit{Points: 3, RSSKiBPerTrainJob: 8.92, RSSInterceptMiB: 54.1, HeapKiBPerTrainJob: 7.02, HeapInterceptMiB: 12},
			want: "Memory per settled TrainJob (least squares over the 3 samples from the first wave on): RSS 8.92 KiB (from 54.1 MiB), Go heap 7.02 KiB (from 12.0 MiB).",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, strings.TrimSpace(memoryFitLine(tc.fit))); diff != "" {
				t.Errorf("memoryFitLine (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestCaughtUp(t *testing.T) {
	scrape := func(reconciles, depth string) string {
		return "# TYPE controller_runtime_reconcile_total counter\n" +
			`controller_runtime_reconcile_total{controller="trainjob_controller",result="success"} ` + reconciles + "\n" +
			`controller_runtime_reconcile_total{controller="trainingruntime_controller",result="success"} 500` + "\n" +
			"# TYPE workqueue_depth gauge\n" +
			`workqueue_depth{controller="trainjob_controller",name="trainjob_controller"} ` + depth + "\n" +
			`workqueue_depth{controller="trainingruntime_controller",name="trainingruntime_controller"} 3` + "\n"
	}
	cases := map[string]struct {
		metrics string
		want    bool
	}{
		"every TrainJob reconciled, queue empty":    {metrics: scrape("100", "0"), want: true},
		"more reconciles than TrainJobs":            {metrics: scrape("250", "0"), want: true},
		"queue not empty":                           {metrics: scrape("100", "4"), want: false},
		"not every TrainJob reconciled yet":         {metrics: scrape("99", "0"), want: false},
		"no TrainJob controller metrics (starting)": {metrics: "# TYPE go_goroutines gauge\ngo_goroutines 9\n", want: false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			m, err := parseMetrics(strings.NewReader(tc.metrics))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, caughtUp(m, 100)); diff != "" {
				t.Errorf("caughtUp (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestScaleSummary(t *testing.T) {
	rep := &ScaleReport{
		Parameters: ScaleParameters{TrainJobs: 2000, Wave: 1000, Nodes: 500, NodesPerTrainJob: 4, Parallel: 16, PodDuration: "5s"},
		Machine:    Machine{CPUs: 2, Commit: "abc1234"},
		Points: []ScalePoint{
			{Settled: 0, RSSMiB: 50, RSSAnonMiB: 10, HeapMiB: 12, CPUSeconds: 1},
			{Settled: 1000, RSSMiB: 58, RSSAnonMiB: 18, HeapMiB: 16, CPUSeconds: 10, WaveSeconds: 9.5, SettledSeconds: 60,
				Latency: Summary{Count: 1000, P50: 80, P99: 900}},
		},
		Memory:  MemoryFit{Points: 2, RSSKiBPerTrainJob: 8.19, RSSInterceptMiB: 50, HeapKiBPerTrainJob: 4.1, HeapInterceptMiB: 12},
		Idle:    ScaleIdle{Seconds: 60, CPUSeconds: 0.4, Writes: []WriteRow{{Verb: "update", Resource: "leases.coordination.k8s.io", Count: 30}}, RSSMiB: 58},
		Restart: ScaleRestart{ReadySeconds: 2.5, FreshJobSetSeconds: 0.31, CaughtUpSeconds: 7.25, RSSMiB: 61, CPUSeconds: 3},
	}
	got := scaleSummary(rep)
	for _, want := range []string{
		"| 0 | 50.0 MiB (10.0) | 12.0 MiB | 1.0 s | – | – | – |",
		"| 1000 | 58.0 MiB (18.0) | 16.0 MiB | 10.0 s | 9.5 s | 60.0 s | 80 / 900 ms |",
		"RSS 8.19 KiB (from 50.0 MiB), Go heap 4.10 KiB (from 12.0 MiB)",
		"Idle over 2000 settled TrainJobs for 60 s: 0 TrainJob writes (30 writes in all), 0.40 CPU seconds",
		"ready (/readyz) 2.5 s after the start; a TrainJob created then had its JobSet 0.31 s later; every TrainJob reconciled and the queue empty 7.2 s after the start",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("scale.md lacks %q:\n%s", want, got)
		}
	}
}

// TestDeleteAllRetrying: a delete-collection the apiserver cuts off (its request timeout, a reset
// stream) is sent again, within a bound, instead of ending a run of an hour.
func TestDeleteAllRetrying(t *testing.T) {
	cutOff := errors.New("stream error: stream ID 22297; INTERNAL_ERROR; received from peer")
	cases := map[string]struct {
		failures  int
		wantCalls int
		wantErr   bool
	}{
		"first attempt":                 {wantCalls: 1},
		"cut off twice, then done":      {failures: 2, wantCalls: 3},
		"cut off every time: bounded":   {failures: 99, wantCalls: 5, wantErr: true},
		"cut off until the last chance": {failures: 4, wantCalls: 5},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			c := fake.NewClientBuilder().WithInterceptorFuncs(interceptor.Funcs{
				DeleteAllOf: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteAllOfOption) error {
					calls++
					if calls <= tc.failures {
						return cutOff
					}
					return c.DeleteAllOf(ctx, obj, opts...)
				},
			}).Build()
			err := deleteAllRetrying(context.Background(), c, &corev1.Pod{}, 5, client.InNamespace(benchNamespace))
			if (err != nil) != tc.wantErr || (err != nil && !errors.Is(err, cutOff)) {
				t.Errorf("err = %v, want an error wrapping the cut-off: %v", err, tc.wantErr)
			}
			if calls != tc.wantCalls {
				t.Errorf("%d delete-collections sent, want %d", calls, tc.wantCalls)
			}
		})
	}
}
