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

// Command uibench is `make bench-ui-history`: gantry-ui's memory while one TrainJob reports 256
// new metric names a second (issue 34's reproduction) against an envtest API server. It prints
// the UI's peak and final RSS, writes result.json, and fails if the peak exceeds the limit.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	o := options{log: os.Stderr}
	var out, uiArgs string
	var limitMiB int64
	flag.DurationVar(&o.duration, "duration", 5*time.Minute, "how long the job reports")
	flag.DurationVar(&o.interval, "interval", time.Second, "time between reports")
	flag.IntVar(&o.names, "names", 256, "new metric names per report (the API allows 256 metrics)")
	flag.Int64Var(&limitMiB, "limit-mib", 128, "the peak RSS the UI must stay under, MiB (the chart's memory limit)")
	flag.StringVar(&o.uiBin, "ui-bin", "", "the gantry-ui binary to measure; built from the checkout when empty")
	flag.StringVar(&uiArgs, "ui-args", "", "extra gantry-ui flags, space-separated")
	flag.BoolVar(&o.watch, "watch", true, "keep the job's Progress tab's live stream open, as a user watching it")
	flag.StringVar(&out, "out", "_output/ui-history", "output directory")
	flag.Parse()
	o.limit = limitMiB << 20
	o.uiArgs = strings.Fields(uiArgs)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench(ctx, o, out)
	stop()
	os.Exit(code)
}

func bench(ctx context.Context, o options, out string) int {
	if err := os.MkdirAll(out, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, "bench-ui-history:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "bench-ui-history-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-ui-history:", err)
		return 1
	}
	defer func() { _ = os.RemoveAll(dir) }()
	o.dir = dir
	res, err := run(ctx, o)
	if res != nil {
		res.Command = strings.Join(append([]string{"go run ./test/uibench"}, os.Args[1:]...), " ")
		fmt.Print(res.summary())
		if data, jerr := json.MarshalIndent(res, "", "  "); jerr == nil {
			_ = os.WriteFile(filepath.Join(out, "result.json"), data, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench-ui-history:", err)
		return 1
	}
	if res.PeakRSS > o.limit {
		fmt.Fprintf(os.Stderr, "bench-ui-history: the UI's peak RSS %.1f MiB exceeds %d MiB\n", float64(res.PeakRSS)/mib, o.limit>>20)
		return 1
	}
	return 0
}
