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

// Command perf is Gantry's benchmark harness (`make bench`). On fresh envtest control planes it
// creates N TrainJobs through the real manager binary and, as the physical limit, the same N
// JobSets directly; it measures creation time and latency, the manager's API writes, memory and
// CPU, and the status path, and writes bench.json, summary.md and PNG charts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.uber.org/zap/zapcore"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/features"
	"github.com/gantry-ml/gantry/test/util"
)

// unlimited stands for "no client-side rate limit": a token bucket this large never waits, and
// the manager's Configuration accepts it (it refuses a negative qps).
var unlimited = limits{Label: "off", QPS: 1e6, Burst: 1e6}

type options struct {
	n, nodes, parallel int
	defaults           limits
	unrelated          unrelatedSpec
	out                string
	manager            string
	timeout            time.Duration
	concurrency        int
	featureGates       string
	// managerConfig is appended to the manager's Configuration (-manager-config).
	managerConfig    string
	clientsUnlimited bool
	pprof            bool
	pprofDuration    time.Duration
	only             []string
	// repeat runs the scenario list this many times, alternating, so a noisy machine shows as
	// spread rather than as a wrong ratio.
	repeat int
	scale  scaleOptions
}

func parseOptions() *options {
	o := &options{}
	var qps float64
	var only string
	flag.IntVar(&o.n, "n", 1000, "TrainJobs (and JobSets) per scenario")
	flag.IntVar(&o.nodes, "nodes", 4, "nodes per TrainJob")
	flag.IntVar(&o.parallel, "parallel", 16, "parallel clients creating TrainJobs (and, in the baseline, JobSets)")
	flag.Float64Var(&qps, "qps", float64(configapi.DefaultClientConnectionQPS), "client QPS of the default-limits scenarios (manager and harness clients); Kubeflow Trainer's default is 50")
	flag.IntVar(&o.defaults.Burst, "burst", int(configapi.DefaultClientConnectionBurst), "client burst of the default-limits scenarios; Kubeflow Trainer's default is 100")
	flag.IntVar(&o.unrelated.Count, "unrelated", 20000, "unrelated ConfigMaps and Secrets created before the manager starts, in the unrelated scenario")
	flag.Float64Var(&o.unrelated.LargeShare, "unrelated-large-share", 0.1, "share of the unrelated objects that are large")
	flag.IntVar(&o.unrelated.LargeBytes, "unrelated-large-bytes", 100<<10, "data size of a large unrelated object")
	flag.StringVar(&o.out, "out", "_output/bench", "output directory")
	flag.StringVar(&o.manager, "manager", "", "manager binary; built from ./cmd/manager into <out>/bin when empty")
	flag.DurationVar(&o.timeout, "timeout", 10*time.Minute, "limit of every wait")
	flag.BoolVar(&o.clientsUnlimited, "clients-unlimited", false, "the harness's TrainJob clients have no rate limit in every scenario; only the manager's follow the scenario")
	flag.IntVar(&o.concurrency, "concurrency", 0, "TrainJob controller concurrency (controller.groupKindConcurrency); 0 keeps the manager's default")
	flag.StringVar(&o.featureGates, "feature-gates", "", "the manager's --feature-gates (e.g. TrainJobStatus=false); empty keeps the defaults")
	flag.StringVar(&o.managerConfig, "manager-config", "", "YAML appended to the manager's Configuration, e.g. 'tls: {nextProtos: [h2, http/1.1]}' (HTTP/2 on the webhook server)")
	flag.BoolVar(&o.pprof, "pprof", false, "profile the manager (CPU during creation, heap after) into the scenario directories")
	flag.DurationVar(&o.pprofDuration, "pprof-duration", 20*time.Second, "length of the CPU profile")
	flag.StringVar(&only, "scenarios", "", "comma-separated scenario names to run (default: all)")
	flag.IntVar(&o.repeat, "repeat", 1, "runs of the scenario list, alternating; targets then report min/median/max and are judged on the median")
	flag.BoolVar(&o.scale.enabled, "scale", false, "the scale run instead of the scenarios: a local cluster with kwok nodes, -n TrainJobs of -nodes nodes created in waves, each run to completion")
	flag.IntVar(&o.scale.wave, "wave", 1000, "with -scale: TrainJobs per wave")
	flag.IntVar(&o.scale.nodes, "kwok-nodes", 500, "with -scale: simulated GPU nodes, 8 GPUs each (a TrainJob's node asks for 8)")
	flag.DurationVar(&o.scale.podDuration, "pod-duration", 5*time.Second, "with -scale: how long a simulated pod runs")
	flag.BoolVar(&o.scale.deletePods, "delete-pods", true, "with -scale: delete each wave's Succeeded pods once it settled (Gantry reads no pods, but the simulated cluster slows with every pod kept)")
	flag.DurationVar(&o.scale.idle, "idle", time.Minute, "with -scale: the idle window over every settled TrainJob")
	flag.BoolVar(&o.scale.keep, "keep-cluster", false, "with -scale: leave the local cluster (.state/scale) running")
	flag.Parse()
	o.defaults.QPS = float32(qps)
	o.defaults.Label = "default"
	if o.defaults.QPS != configapi.DefaultClientConnectionQPS || int32(o.defaults.Burst) != configapi.DefaultClientConnectionBurst {
		o.defaults.Label = "custom"
	}
	if only != "" {
		o.only = strings.Split(only, ",")
	}
	return o
}

func main() {
	ctrl.SetLogger(zap.New(zap.WriteTo(os.Stderr), zap.Level(zapcore.ErrorLevel)))
	o := parseOptions()
	runner := run
	if o.scale.enabled {
		runner = runScale
	}
	// An interrupt cancels the run, so that what it started (a scale run's local cluster) is
	// brought down by its deferred clean-up rather than left running.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := runner(ctx, o)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// runs lists the scenarios in the order they run: the whole list o.repeat times, numbered when
// repeated.
func (o *options) runs() []scenario {
	if o.repeat <= 1 {
		return o.scenarios()
	}
	var out []scenario
	for run := 1; run <= o.repeat; run++ {
		for _, sc := range o.scenarios() {
			sc.run = run
			out = append(out, sc)
		}
	}
	return out
}

func (o *options) scenarios() []scenario {
	all := []scenario{
		{name: "baseline-default-limits", kind: kindBaseline, limits: o.defaults},
		{name: "gantry-default-limits", kind: kindGantry, limits: o.defaults},
		{name: "floor-default-limits", kind: kindBaseline, limits: o.defaults, floor: true},
		{name: "baseline-no-limits", kind: kindBaseline, limits: unlimited},
		{name: "floor-no-limits", kind: kindBaseline, limits: unlimited, floor: true},
		{name: "baseline-no-limits-apply", kind: kindBaseline, limits: unlimited, apply: true},
		{name: "gantry-no-limits", kind: kindGantry, limits: unlimited},
		{name: "gantry-no-limits-unrelated", kind: kindGantry, limits: unlimited, unrelated: true},
	}
	if len(o.only) == 0 {
		return all
	}
	var out []scenario
	for _, sc := range all {
		if slices.Contains(o.only, sc.name) {
			out = append(out, sc)
		}
	}
	return out
}

func run(ctx context.Context, o *options) error {
	scenarios := o.runs()
	if len(scenarios) == 0 {
		return fmt.Errorf("no scenario matches -scenarios %s", strings.Join(o.only, ","))
	}
	// The manager's own gate set parses the value, on a copy, so a typo fails before any
	// control plane starts rather than as a manager that never gets ready.
	if o.featureGates != "" {
		if err := features.Gates().DeepCopy().Set(o.featureGates); err != nil {
			return fmt.Errorf("-feature-gates: %w", err)
		}
	}
	if err := prepareOut(o, scenarios); err != nil {
		return err
	}
	report := newReport(o)
	var jobsets []*unstructured.Unstructured
	for _, sc := range scenarios {
		fmt.Fprintf(os.Stderr, "bench: %s run %d (N=%d, client limits %s, load %.2f)\n", sc.name, max(sc.run, 1), o.n, describeLimits(sc.limits), loadAverage())
		var res *ScenarioResult
		var err error
		if sc.kind == kindBaseline {
			if jobsets == nil {
				if jobsets, err = renderJobSets(o.n, int32(o.nodes)); err != nil {
					return err
				}
			}
			res, err = runBaseline(ctx, o, sc, jobsets)
		} else {
			res, err = runGantry(ctx, o, sc)
		}
		if err != nil {
			return fmt.Errorf("%s (run %d): %w", sc.name, max(sc.run, 1), err)
		}
		report.Scenarios = append(report.Scenarios, res)
	}
	report.Machine.LoadAverageEnd = loadAverage()
	report.Targets = evaluateTargets(report)
	return writeOutputs(o, report)
}

// prepareOut creates the output directory, removes the previous run's scenario directories and
// builds the manager.
func prepareOut(o *options, scenarios []scenario) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	for _, sc := range scenarios {
		if err := os.RemoveAll(filepath.Join(o.out, sc.name)); err != nil {
			return err
		}
	}
	for _, sc := range scenarios {
		if err := os.MkdirAll(sc.dir(o.out), 0o755); err != nil {
			return err
		}
	}
	if o.manager != "" {
		return nil
	}
	bin := filepath.Join(o.out, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	var err error
	o.manager, err = buildManager(bin)
	if err != nil {
		return err
	}
	o.manager, err = filepath.Abs(o.manager)
	return err
}

func featureGatesLabel(gates string) string {
	if gates == "" {
		return "defaults"
	}
	return "defaults, except " + gates
}

func newReport(o *options) *Report {
	ls := []limits{o.defaults, unlimited}
	return &Report{
		Parameters: Parameters{
			TrainJobs: o.n, NodesPerTrainJob: o.nodes, Parallel: o.parallel, Limits: ls, Unrelated: o.unrelated, Runs: max(o.repeat, 1),
			ClientsUnlimited: o.clientsUnlimited,
			Webhooks: "Gantry's mutating and validating webhooks are registered as installed (config/webhook), " +
				"served by the manager with envtest's certificate (certManagement off); baselines and the floor run with none registered",
			FeatureGates:  featureGatesLabel(o.featureGates),
			ManagerConfig: o.managerConfig,
			Timing: "watch-observed times on the harness's clock (creationTimestamps have 1 s resolution); " +
				"peak RSS is VmHWM of /proc/<pid>/status, CPU is utime+stime of /proc/<pid>/stat, both read just before the manager is stopped",
		},
		Machine: Machine{
			CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Commit: commit(),
			StartedAt: time.Now().UTC(), LoadAverageStart: loadAverage(),
		},
	}
}

func commit() string {
	cmd := exec.Command("git", "describe", "--always", "--dirty")
	cmd.Dir = util.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		return "unknown"
	}
	return strings.TrimSpace(string(out))
}

func describeLimits(l limits) string {
	if l == unlimited {
		return "off"
	}
	return fmt.Sprintf("QPS %g / burst %d", l.QPS, l.Burst)
}

// writeOutputs writes bench.json, summary.md and the charts, and prints the summary.
func writeOutputs(o *options, report *Report) error {
	if err := writeJSON(filepath.Join(o.out, "bench.json"), report); err != nil {
		return err
	}
	charts, err := drawCharts(o.out, report)
	if err != nil {
		return fmt.Errorf("drawing the charts: %w", err)
	}
	summary := markdownSummary(report, charts)
	if err := os.WriteFile(filepath.Join(o.out, "summary.md"), []byte(summary), 0o644); err != nil {
		return err
	}
	fmt.Print(summary)
	return nil
}
