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
	"io"
	"net/http"
	"strings"
)

// metrics serves the UI's figures in Prometheus' text format. gantry-ui links no Prometheus
// client library (it stays lean, TestLean): these are a few counters and gauges read at scrape
// time.
func (s *Server) metrics(w http.ResponseWriter, _ *http.Request) {
	st := s.Store.History.Stats()
	var b strings.Builder
	family(&b, "gantry_ui_history_dropped_total", "counter", "Values of progress reports the UI's history did not keep: "+
		"of metric names beyond a job's first --history-metric-names (metric-names), or of curves the --history-memory budget had no room for (memory).")
	fmt.Fprintf(&b, "gantry_ui_history_dropped_total{reason=\"memory\"} %d\n", st.DroppedMemory)
	fmt.Fprintf(&b, "gantry_ui_history_dropped_total{reason=\"metric-names\"} %d\n", st.DroppedNames)
	family(&b, "gantry_ui_history_evicted_jobs_total", "counter",
		"Finished jobs whose curves were dropped to make room within --history-memory for a running job's.")
	fmt.Fprintf(&b, "gantry_ui_history_evicted_jobs_total %d\n", st.EvictedJobs)
	family(&b, "gantry_ui_history_bytes", "gauge", "Memory the progress curves hold, each counted at its full --history-points.")
	fmt.Fprintf(&b, "gantry_ui_history_bytes %d\n", st.Bytes)
	family(&b, "gantry_ui_history_budget_bytes", "gauge", "The progress curves' memory budget, --history-memory.")
	fmt.Fprintf(&b, "gantry_ui_history_budget_bytes %d\n", st.Budget)
	family(&b, "gantry_ui_history_jobs", "gauge", "Jobs with progress curves.")
	fmt.Fprintf(&b, "gantry_ui_history_jobs %d\n", st.Jobs)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, b.String())
}

func family(b *strings.Builder, name, kind, help string) {
	fmt.Fprintf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, kind)
}
