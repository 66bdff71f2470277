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
	"os"
	"testing"
	"time"

	"github.com/gantry-ml/gantry/internal/ui"
)

// TestQuickForm is `make bench-ui-history` for 20 s, for CI: twenty seconds cannot grow the RSS
// to the limit, so besides the RSS it checks the history's own accounting, which the bound
// decides. The spammer's curves reserve no more than its first 32 names at full length, and
// every later name's values are counted as dropped.
func TestQuickForm(t *testing.T) {
	o := options{duration: 20 * time.Second, interval: time.Second, names: 256, limit: 128 << 20, watch: true,
		dir: t.TempDir(), log: os.Stderr}
	res, err := run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(res.summary())
	limits := ui.HistoryLimits{Points: ui.DefaultHistoryPoints}
	var names []string
	for range ui.DefaultHistoryMetricNames {
		names = append(names, string(make([]byte, 64)))
	}
	m := res.UIMetrics
	if m == nil {
		t.Fatal("the UI served no gantry_ui_history_* metrics")
	}
	if got, most := m["gantry_ui_history_bytes"], ui.HistoryCost(limits, names...); got > most || got == 0 {
		t.Errorf("the history holds %d bytes, want some and at most %d (one job of %d names)", got, most, ui.DefaultHistoryMetricNames)
	}
	if got, least := m[`gantry_ui_history_dropped_total{reason="metric-names"}`], int64((res.Reports-2)*o.names); got < least {
		t.Errorf("%d values dropped for their names in %d reports, want at least %d", got, res.Reports, least)
	}
	if res.Reports < 15 || res.StreamEvents == 0 {
		t.Errorf("%d reports and %d stream events in 20 s: the writer or the watcher fell behind", res.Reports, res.StreamEvents)
	}
	if res.PeakRSS > o.limit {
		t.Errorf("peak RSS %d MiB, over the limit of %d", res.PeakRSS>>20, o.limit>>20)
	}
}
