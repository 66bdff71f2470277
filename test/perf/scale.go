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
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// scaleManager is the local cluster's manager component.
const scaleManager = "gantry-manager"

// scaleOptions shape the scale run (-scale): TrainJobs are created in waves of wave, each run
// to completion by kwok on nodes simulated GPU nodes before the next.
type scaleOptions struct {
	enabled     bool
	wave, nodes int
	podDuration time.Duration
	idle        time.Duration
	keep        bool
	// deletePods deletes each wave's Succeeded pods once it settled.
	deletePods bool
}

// scaleRun is the state of one scale run.
type scaleRun struct {
	o        *options
	cluster  *localcluster.Cluster
	client   client.WithWatch
	token    string
	metrics  *http.Client
	jobsets  *observer
	trainJob *observer
	// pprof is the manager's profiling address.
	pprof string
}

// scaleHeapProfile is the manager's heap over every settled TrainJob, after a garbage collection.
const scaleHeapProfile = "scale-heap.pprof"

// runScale brings up a local cluster, runs the waves, the idle window and a restart, and
// writes scale.json, scale.md and the plots.
func runScale(ctx context.Context, o *options) error {
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	r, err := startScale(ctx, o)
	if err != nil {
		return err
	}
	if !o.scale.keep {
		defer func() { _ = r.cluster.Down() }()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := r.observe(ctx); err != nil {
		return err
	}
	rep := &ScaleReport{Parameters: ScaleParameters{TrainJobs: o.n, Wave: o.scale.wave, Nodes: o.scale.nodes,
		NodesPerTrainJob: o.nodes, Parallel: o.parallel, PodDuration: o.scale.podDuration.String(), PodsDeleted: o.scale.deletePods},
		Machine: Machine{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), Commit: commit(), StartedAt: time.Now().UTC(), LoadAverageStart: loadAverage()}}
	p, err := r.sample(ctx, 0)
	if err != nil {
		return err
	}
	rep.Points = append(rep.Points, p)
	for start := 0; start < o.n; start += o.scale.wave {
		p, err := r.wave(ctx, start, min(o.scale.wave, o.n-start))
		if err != nil {
			return fmt.Errorf("the wave from %s: %w", trainJobName(start), err)
		}
		rep.Points = append(rep.Points, p)
		fmt.Fprintf(os.Stderr, "scale: %d settled: RSS %.1f MiB, Go heap %.1f MiB, CPU %.1f s; wave: all JobSets after %.1f s, p99 %.0f ms (load %.2f)\n",
			p.Settled, p.RSSMiB, p.HeapMiB, p.CPUSeconds, p.WaveSeconds, p.Latency.P99, loadAverage())
	}
	if rep.Idle, err = r.idle(ctx); err != nil {
		return fmt.Errorf("the idle window: %w", err)
	}
	if err := fetch(ctx, "http://"+r.pprof+"/debug/pprof/heap?gc=1", filepath.Join(o.out, scaleHeapProfile)); err != nil {
		return fmt.Errorf("the manager's heap profile: %w", err)
	}
	if rep.Restart, err = r.restart(ctx); err != nil {
		return fmt.Errorf("the restart: %w", err)
	}
	rep.Machine.LoadAverageEnd = loadAverage()
	rep.Memory = fitMemory(rep.Points)
	return writeScaleOutputs(o.out, rep)
}

// startScale starts a fresh local cluster (a previous run's goes first) with the audit log on
// and the nodes asked for.
func startScale(ctx context.Context, o *options) (*scaleRun, error) {
	root := util.RepoRoot()
	stateDir := filepath.Join(root, ".state", "scale")
	if stale, err := localcluster.Open(root, stateDir); err == nil && stale.Running() {
		if err := stale.Down(); err != nil {
			return nil, err
		}
	}
	s := localcluster.DefaultSettings()
	// Below the kernel's ephemeral range and apart from the reliability (10000) and e2e (20000)
	// suites' ports.
	offset, err := localcluster.FreePortOffset(s.Ports, 25000, 100, 20)
	if err != nil {
		return nil, err
	}
	s.Ports = s.Ports.Offset(offset)
	s.Audit = true
	s.Throughput = true
	s.PodDuration = localcluster.Duration{Duration: o.scale.podDuration}
	s.Nodes.Count = o.scale.nodes
	s.Nodes.NodesPerRack = 25
	pprof, err := freeAddress()
	if err != nil {
		return nil, err
	}
	r := &scaleRun{o: o, pprof: pprof, cluster: &localcluster.Cluster{
		Root: root, StateDir: stateDir, BinDir: filepath.Join(root, "bin"), Out: os.Stderr, Settings: s,
		ManagerArgs: []string{"--pprof-bind-address", pprof},
	}}
	if err := r.cluster.Up(ctx); err != nil {
		return nil, errors.Join(err, r.cluster.Down())
	}
	if err := r.connect(ctx); err != nil {
		return nil, errors.Join(err, r.cluster.Down())
	}
	return r, nil
}

func (r *scaleRun) connect(ctx context.Context) error {
	cfg, err := r.cluster.RESTConfig()
	if err != nil {
		return err
	}
	r.token = cfg.BearerToken
	r.metrics = &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // a local cluster's self-signed metrics certificate
	}}
	cfg.QPS, cfg.Burst = unlimited.QPS, unlimited.Burst
	sch, err := scheme.New()
	if err != nil {
		return err
	}
	if r.client, err = client.NewWithWatch(cfg, client.Options{Scheme: sch}); err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: benchNamespace}}
	return client.IgnoreAlreadyExists(r.client.Create(ctx, ns))
}

// observe starts the harness's watches on the namespace's JobSets and TrainJobs.
func (r *scaleRun) observe(ctx context.Context) error {
	r.jobsets, r.trainJob = newObserver(nil), newObserver(trainJobComplete)
	watchJobSets(ctx, r.client, r.jobsets)
	watchTrainJobs(ctx, r.client, r.trainJob)
	return errors.Join(r.jobsets.waitWatching(ctx), r.trainJob.waitWatching(ctx))
}

// scrape reads the manager's metrics (HTTPS, the administrator's token).
func (r *scaleRun) scrape(ctx context.Context) (metrics, error) {
	url := fmt.Sprintf("https://127.0.0.1:%d/metrics", r.cluster.Settings.Ports.GantryMetrics)
	return scrapeWith(ctx, r.metrics, url, r.token)
}

// sample reads the manager's memory and CPU from /proc and its Go heap from its metrics.
func (r *scaleRun) sample(ctx context.Context, settled int) (ScalePoint, error) {
	pid := r.cluster.PID(scaleManager)
	if pid == 0 {
		return ScalePoint{}, fmt.Errorf("%s does not run", scaleManager)
	}
	st, err := readProcStat(pid)
	if err != nil {
		return ScalePoint{}, err
	}
	m, err := r.scrape(ctx)
	if err != nil {
		return ScalePoint{}, err
	}
	return ScalePoint{
		Settled: settled, RSSMiB: float64(st.RSSBytes) / mib, RSSAnonMiB: float64(st.RSSAnonBytes) / mib,
		HeapMiB: m.sum("go_memstats_heap_inuse_bytes", nil) / mib, CPUSeconds: st.CPUSeconds,
	}, nil
}

// freeAddress is a loopback address with a port nothing listens on now.
func freeAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer func() { _ = l.Close() }()
	return l.Addr().String(), nil
}
