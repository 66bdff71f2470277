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
	"fmt"
	"os"
	"path/filepath"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Scenario kinds.
const (
	kindBaseline = "baseline"
	kindGantry   = "gantry"
)

// scenario is one measurement on a fresh control plane.
type scenario struct {
	name      string
	kind      string
	limits    limits
	unrelated bool
	// apply makes the baseline write with server-side apply, as the controller does, instead of
	// a create.
	apply bool
	// floor makes the baseline create each TrainJob, then its JobSet: the least API work any
	// TrainJob pipeline can do (no webhooks, no controller).
	floor bool
	// run numbers the repetitions of -repeat, from 1; 0 when the scenario runs once.
	run int
}

// dir is the scenario's output directory under out.
func (sc scenario) dir(out string) string {
	if sc.run == 0 {
		return filepath.Join(out, sc.name)
	}
	return filepath.Join(out, sc.name, fmt.Sprintf("run-%d", sc.run))
}

// trainJobController is the TrainJob controller's name in controller-runtime's metrics.
const trainJobController = "trainjob_controller"

// Write methods of a baseline.
const (
	methodCreate = "create"
	methodApply  = "server-side apply"
	methodFloor  = "TrainJob create, then JobSet create"
)

func newResult(sc scenario) *ScenarioResult {
	res := &ScenarioResult{Name: sc.name, Run: sc.run, Kind: sc.kind, Limits: sc.limits, LoadAverage: [2]float64{loadAverage(), 0}}
	if sc.kind == kindBaseline {
		res.Method = methodCreate
		switch {
		case sc.apply:
			res.Method = methodApply
		case sc.floor:
			res.Method = methodFloor
		}
	}
	return res
}

// runBaseline creates the JobSets Gantry would create, directly, with the same parallelism and
// client rate limits as the TrainJob clients of the Gantry run: the physical limit of this
// control plane on this machine.
func runBaseline(ctx context.Context, o *options, sc scenario, jobsets []*unstructured.Unstructured) (*ScenarioResult, error) {
	cp, err := startControlPlane(sc.dir(o.out), false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cp.stop() }()
	res := newResult(sc)
	jobs, cancel, err := cp.observeJobSets(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	c, err := cp.newClient(sc.limits)
	if err != nil {
		return nil, err
	}
	sent := make([]time.Time, o.n)
	cpu := cp.processCPU()
	apiProfile := filepath.Join(cp.dir, "creation.kube-apiserver.cpu.pprof")
	var profiled <-chan error
	if o.pprof {
		profiled = cp.cpuProfile(ctx, o.pprofDuration, apiProfile)
	}
	start := time.Now()
	res.Retries, err = forEach(ctx, o.n, o.parallel, func(ctx context.Context, i int) error {
		sent[i] = time.Now()
		if sc.floor {
			if err := createIgnoringExists(ctx, c, newTrainJob(benchNamespace, trainJobName(i), int32(o.nodes))); err != nil {
				return err
			}
		}
		if sc.apply {
			return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(jobsets[i].DeepCopy()), client.FieldOwner("trainer"), client.ForceOwnership)
		}
		return createIgnoringExists(ctx, c, jobsets[i].DeepCopy())
	})
	if err != nil {
		return nil, err
	}
	res.Create.SubmitSeconds = time.Since(start).Seconds()
	if err := jobs.waitSeen(ctx, o.n, o.timeout, "JobSets"); err != nil {
		return nil, err
	}
	res.ControlPlaneCPUSeconds = cp.processCPU() - cpu
	seen, _ := jobs.snapshot()
	latencies := make([]float64, 0, o.n)
	for i := range o.n {
		latencies = append(latencies, millis(seen[trainJobName(i)].Sub(sent[i])))
	}
	fillCreate(&res.Create, seen, latencies, start)
	if profiled != nil {
		if err := <-profiled; err != nil {
			fmt.Fprintf(os.Stderr, "kube-apiserver CPU profile: %v\n", err)
		} else {
			res.Profiles = append(res.Profiles, apiProfile)
		}
	}
	res.LoadAverage[1] = loadAverage()
	return res, nil
}

// observeJobSets starts the harness's watch on the JobSets of the benchmark namespace; cancel
// stops it.
func (cp *controlPlane) observeJobSets(ctx context.Context) (*observer, context.CancelFunc, error) {
	c, err := cp.newClient(unlimited)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	jobs := newObserver(nil)
	watchJobSets(ctx, c, jobs)
	if err := jobs.waitWatching(ctx); err != nil {
		cancel()
		return nil, nil, err
	}
	return jobs, cancel, nil
}

func fillCreate(p *CreatePhase, seen map[string]time.Time, latencies []float64, start time.Time) {
	p.JobSetSeconds = sinceSorted(seen, start)
	if n := len(p.JobSetSeconds); n > 0 {
		p.WallSeconds = p.JobSetSeconds[n-1]
	}
	p.Latency = summarize(latencies)
	p.Latencies = latencies
}

func millis(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1000
}

// gantryRun is the state of one Gantry scenario.
type gantryRun struct {
	o        *options
	sc       scenario
	cp       *controlPlane
	dir      string
	res      *ScenarioResult
	jobs     *observer
	trainJob *observer
	clients  client.Client
}

// runGantry measures Gantry on a fresh control plane: creation of N TrainJobs until every
// JobSet exists, a no-op resync (a restarted manager re-reconciles everything), and the status
// path (every JobSet Completed until every TrainJob is Complete).
func runGantry(ctx context.Context, o *options, sc scenario) (*ScenarioResult, error) {
	r := &gantryRun{o: o, sc: sc, dir: sc.dir(o.out), res: newResult(sc)}
	var err error
	if r.cp, err = startControlPlane(r.dir, true); err != nil {
		return nil, err
	}
	defer func() { _ = r.cp.stop() }()
	if sc.unrelated {
		if err := r.createUnrelated(ctx); err != nil {
			return nil, err
		}
	}
	users := sc.limits
	if o.clientsUnlimited {
		users = unlimited
	}
	if r.clients, err = r.cp.newClient(users); err != nil {
		return nil, err
	}
	var cancel context.CancelFunc
	if r.jobs, cancel, err = r.cp.observeJobSets(ctx); err != nil {
		return nil, err
	}
	defer cancel()
	wc, err := r.cp.newClient(unlimited)
	if err != nil {
		return nil, err
	}
	r.trainJob = newObserver(trainJobComplete)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	watchTrainJobs(watchCtx, wc, r.trainJob)
	if err := r.trainJob.waitWatching(ctx); err != nil {
		return nil, err
	}
	if err := r.creation(ctx); err != nil {
		return nil, err
	}
	if err := r.restartAndComplete(ctx); err != nil {
		return nil, err
	}
	r.res.LoadAverage[1] = loadAverage()
	return r.res, nil
}

func (r *gantryRun) createUnrelated(ctx context.Context) error {
	start := time.Now()
	retries, err := createUnrelated(ctx, r.cp.client, r.o.unrelated, r.o.parallel)
	if err != nil {
		return fmt.Errorf("creating unrelated objects: %w", err)
	}
	r.res.Unrelated = r.o.unrelated.Count
	r.res.UnrelatedSeconds = time.Since(start).Seconds()
	r.res.Retries += retries
	return nil
}

// startManager starts a manager process and waits until it serves and has built a warm-up
// TrainJob in its own namespace, so the measurement starts with a manager that is fully up.
func (r *gantryRun) startManager(ctx context.Context, name string) (*managerProcess, error) {
	m, err := startManager(r.o.manager, r.dir, name, r.cp, managerSettings{limits: r.sc.limits, concurrency: r.o.concurrency, featureGates: r.o.featureGates, pprof: r.o.pprof, extra: r.o.managerConfig})
	if err != nil {
		return nil, err
	}
	if err := m.waitReady(ctx, 2*time.Minute); err != nil {
		_, _ = m.stop()
		return nil, err
	}
	return m, nil
}

func (r *gantryRun) warmUp(ctx context.Context, m *managerProcess) error {
	tj := newTrainJob(warmupNamespace, "warmup", int32(r.o.nodes))
	if err := r.cp.client.Create(ctx, tj); err != nil {
		return fmt.Errorf("creating the warm-up TrainJob: %w", err)
	}
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := r.cp.client.Get(ctx, client.ObjectKeyFromObject(tj), &jobsetv1alpha2.JobSet{})
		return err == nil, client.IgnoreNotFound(err)
	})
	if err != nil {
		return fmt.Errorf("waiting for the warm-up JobSet: %w", err)
	}
	return waitQuiet(ctx, m, 0, r.o.timeout)
}

// creation creates N TrainJobs from the parallel clients and waits for every JobSet, then for
// the manager to go quiet, and counts what it wrote.
func (r *gantryRun) creation(ctx context.Context) error {
	m, err := r.startManager(ctx, "manager-1")
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = m.stop()
		}
	}()
	if err := r.warmUp(ctx, m); err != nil {
		return err
	}
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	stat0, err := m.stat()
	if err != nil {
		return err
	}
	r.res.Idle = &IdleRSS{RSS: stat0.RSSBytes, Anon: stat0.RSSAnonBytes, File: stat0.RSSFileBytes}
	cpu := r.cp.processCPU()
	apiBefore, err := r.cp.apiMetrics(ctx)
	if err != nil {
		return err
	}
	profile := r.profile(ctx, m, "creation")
	start := time.Now()
	retries, err := forEach(ctx, r.o.n, r.o.parallel, func(ctx context.Context, i int) error {
		return createIgnoringExists(ctx, r.clients, newTrainJob(benchNamespace, trainJobName(i), int32(r.o.nodes)))
	})
	r.res.Retries += retries
	if err != nil {
		return err
	}
	r.res.Create.SubmitSeconds = time.Since(start).Seconds()
	if err := r.jobs.waitSeen(ctx, r.o.n, r.o.timeout, "JobSets"); err != nil {
		return fmt.Errorf("%w (manager log: %s)", err, m.log.Name())
	}
	r.res.ControlPlaneCPUSeconds = r.cp.processCPU() - cpu
	apiAfter, err := r.cp.apiMetrics(ctx)
	if err != nil {
		return err
	}
	served, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	r.res.Create.Admission = admissionLatencies(apiBefore, apiAfter, before, served)
	r.res.Create.WebhookRequests = served.sum("controller_runtime_webhook_requests_total", nil) - before.sum("controller_runtime_webhook_requests_total", nil)
	r.res.Create.WebhookHandshakes = served.sum("gantry_webhook_tls_handshakes_total", nil) - before.sum("gantry_webhook_tls_handshakes_total", nil)
	gcBefore, _ := before.summaryOf("go_gc_duration_seconds")
	gcAfter, pauses := served.summaryOf("go_gc_duration_seconds")
	r.res.Create.GCs, r.res.Create.GCPauseMaxMs = gcAfter-gcBefore, 1000*pauses[1]
	stat1, err := m.stat()
	if err != nil {
		return err
	}
	r.res.Create.ManagerCPUSeconds = stat1.CPUSeconds - stat0.CPUSeconds
	r.fillLatencies(start)
	if r.res.Create.Breakdown, err = r.breakdown(before, served); err != nil {
		return err
	}
	if r.res.Happy, err = r.writePhase(ctx, m, before, start, r.o.n); err != nil {
		return err
	}
	r.finishProfile(ctx, m, profile, "creation")
	stopped = true
	return r.stopManager(ctx, m, "manager-1", "start, warm-up, creation of N TrainJobs")
}

// stopManager records the manager's memory and CPU and stops it.
func (r *gantryRun) stopManager(ctx context.Context, m *managerProcess, name, phases string) error {
	stats := map[string]float64{}
	if s, err := m.scrape(ctx); err == nil {
		for _, g := range []string{"heap_alloc", "heap_inuse", "heap_sys", "stack_inuse", "sys", "next_gc"} {
			stats[g] = s.sum("go_memstats_"+g+"_bytes", nil)
		}
	}
	usage, err := m.stop()
	if err != nil {
		return err
	}
	r.res.Managers = append(r.res.Managers, ManagerUsage{
		Name: name, Phases: phases, PeakRSSBytes: usage.PeakRSSBytes, CPUSeconds: usage.CPUSeconds,
		RSSAnonBytes: usage.RSSAnonBytes, RSSFileBytes: usage.RSSFileBytes, GoMemStats: stats,
	})
	return nil
}

// fillLatencies pairs each TrainJob with its JobSet, both as the harness's watches saw them.
func (r *gantryRun) fillLatencies(start time.Time) {
	jobs, _ := r.jobs.snapshot()
	tjs, _ := r.trainJob.snapshot()
	latencies := make([]float64, 0, len(jobs))
	for name, seen := range jobs {
		if created, ok := tjs[name]; ok {
			latencies = append(latencies, millis(seen.Sub(created)))
		}
	}
	fillCreate(&r.res.Create, jobs, latencies, start)
}

// breakdown cuts each TrainJob's way to its JobSet into stages at the apiserver's timestamps,
// beside the manager's queue and reconcile histograms between the scrapes before and after.
func (r *gantryRun) breakdown(before, after metrics) (*Breakdown, error) {
	times, err := readStageTimes(r.cp.auditLog)
	if err != nil {
		return nil, err
	}
	jobs, _ := r.jobs.snapshot()
	b := breakdown(times, jobs)
	b.managerQueue(before, after)
	return b, nil
}

// writePhase waits for the manager to go quiet with at least wantReconciles TrainJob
// reconciles since before, then counts its writes since start.
func (r *gantryRun) writePhase(ctx context.Context, m *managerProcess, before metrics, start time.Time, wantReconciles int) (*WritePhase, error) {
	if err := waitQuiet(ctx, m, reconciles(before)+float64(wantReconciles), r.o.timeout); err != nil {
		return nil, fmt.Errorf("%w (manager log: %s)", err, m.log.Name())
	}
	end := time.Now()
	after, err := m.scrape(ctx)
	if err != nil {
		return nil, err
	}
	rows, err := auditWrites(r.cp.auditLog, managerUser, start, end)
	if err != nil {
		return nil, err
	}
	return &WritePhase{
		Seconds:      end.Sub(start).Seconds(),
		Reconciles:   reconciles(after) - reconciles(before),
		ClientWrites: delta(after.clientWrites(), before.clientWrites()),
		Writes:       rows,
		PerTrainJob:  float64(perTrainJob(rows)) / float64(r.o.n),
	}, nil
}

func reconciles(m metrics) float64 {
	return m.sum("controller_runtime_reconcile_total", map[string]string{"controller": trainJobController})
}

// waitQuiet waits until the TrainJob controller has run at least minReconciles reconciles in
// total and its queue has stayed empty, with nothing in flight and nothing added, for a second.
func waitQuiet(ctx context.Context, m *managerProcess, minReconciles float64, timeout time.Duration) error {
	queue := map[string]string{"name": trainJobController}
	var lastAdds float64
	quietSince := time.Time{}
	err := wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		s, err := m.scrape(ctx)
		if err != nil {
			return false, nil
		}
		adds := s.sum("workqueue_adds_total", queue)
		busy := s.sum("workqueue_depth", queue) > 0 || s.sum("workqueue_unfinished_work_seconds", queue) > 0 ||
			adds != lastAdds || reconciles(s) < minReconciles
		lastAdds = adds
		if busy {
			quietSince = time.Time{}
			return false, nil
		}
		if quietSince.IsZero() {
			quietSince = time.Now()
		}
		return time.Since(quietSince) >= time.Second, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager to finish its work: %w", err)
	}
	return nil
}

// restartAndComplete restarts the manager (every TrainJob is reconciled again with nothing to
// change) and then runs the status path against the new process.
func (r *gantryRun) restartAndComplete(ctx context.Context) error {
	start := time.Now()
	m, err := r.startManager(ctx, "manager-2")
	if err != nil {
		return err
	}
	stopped := false
	defer func() {
		if !stopped {
			_, _ = m.stop()
		}
	}()
	zero := metrics{}
	if r.res.Resync, err = r.writePhase(ctx, m, zero, start, r.o.n+1); err != nil {
		return err
	}
	if err := r.statusPath(ctx, m); err != nil {
		return err
	}
	stopped = true
	return r.stopManager(ctx, m, "manager-2", "restart with N TrainJobs, no-op resync, status path")
}

// statusPath marks every JobSet Completed, as the JobSet controller does when every Job
// succeeded, and waits until every TrainJob is Complete.
func (r *gantryRun) statusPath(ctx context.Context, m *managerProcess) error {
	list := &jobsetv1alpha2.JobSetList{}
	if err := r.cp.client.List(ctx, list, client.InNamespace(benchNamespace)); err != nil {
		return err
	}
	if len(list.Items) != r.o.n {
		return fmt.Errorf("%d JobSets in %s, want %d", len(list.Items), benchNamespace, r.o.n)
	}
	before, err := m.scrape(ctx)
	if err != nil {
		return err
	}
	written := make([]time.Time, len(list.Items))
	start := time.Now()
	retries, err := forEach(ctx, len(list.Items), r.o.parallel, func(ctx context.Context, i int) error {
		js := &list.Items[i]
		completeJobSet(js, time.Now())
		if err := r.clients.Status().Update(ctx, js); err != nil {
			return fmt.Errorf("completing JobSet %s: %w", js.Name, err)
		}
		written[i] = time.Now()
		return nil
	})
	r.res.Retries += retries
	if err != nil {
		return err
	}
	if err := r.trainJob.waitDone(ctx, r.o.n, r.o.timeout, "Complete TrainJobs"); err != nil {
		return fmt.Errorf("%w (manager log: %s)", err, m.log.Name())
	}
	_, done := r.trainJob.snapshot()
	latencies := make([]float64, 0, len(done))
	for i := range list.Items {
		if t, ok := done[list.Items[i].Name]; ok {
			latencies = append(latencies, millis(t.Sub(written[i])))
		}
	}
	completeSeconds := sinceSorted(done, start)
	phase := &StatusPhase{CompleteSeconds: completeSeconds, Latency: summarize(latencies)}
	if n := len(completeSeconds); n > 0 {
		phase.WallSeconds = completeSeconds[n-1]
	}
	if phase.Writes, err = r.writePhase(ctx, m, before, start, r.o.n); err != nil {
		return err
	}
	r.res.StatusPath = phase
	return nil
}

// completeJobSet sets the status the JobSet controller writes once every Job succeeded.
func completeJobSet(js *jobsetv1alpha2.JobSet, now time.Time) {
	js.Status.Conditions = []metav1.Condition{{
		Type:               string(jobsetv1alpha2.JobSetCompleted),
		Status:             metav1.ConditionTrue,
		Reason:             "AllJobsCompleted",
		Message:            "jobset completed successfully",
		LastTransitionTime: metav1.NewTime(now),
	}}
	js.Status.TerminalState = string(jobsetv1alpha2.JobSetCompleted)
	js.Status.ReplicatedJobsStatus = nil
	for _, rj := range js.Spec.ReplicatedJobs {
		js.Status.ReplicatedJobsStatus = append(js.Status.ReplicatedJobsStatus, jobsetv1alpha2.ReplicatedJobStatus{
			Name: rj.Name, Succeeded: rj.Replicas,
		})
	}
}

// profiles are the CPU profiles of one phase, manager and kube-apiserver, in flight.
type profiles struct {
	manager, apiserver         <-chan error
	managerPath, apiserverPath string
}

// profile starts CPU profiles of the manager and kube-apiserver when pprof is on.
func (r *gantryRun) profile(ctx context.Context, m *managerProcess, phase string) *profiles {
	if !r.o.pprof {
		return nil
	}
	p := &profiles{
		managerPath:   filepath.Join(r.dir, phase+".manager.cpu.pprof"),
		apiserverPath: filepath.Join(r.dir, phase+".kube-apiserver.cpu.pprof"),
	}
	p.manager = m.cpuProfile(ctx, r.o.pprofDuration, p.managerPath)
	p.apiserver = r.cp.cpuProfile(ctx, r.o.pprofDuration, p.apiserverPath)
	return p
}

// finishProfile saves the manager's heap profile and waits for the CPU profiles.
func (r *gantryRun) finishProfile(ctx context.Context, m *managerProcess, p *profiles, phase string) {
	if p == nil {
		return
	}
	heap := filepath.Join(r.dir, phase+".manager.heap.pprof")
	if err := m.heapProfile(ctx, heap); err != nil {
		fmt.Fprintf(os.Stderr, "heap profile: %v\n", err)
	} else {
		r.res.Profiles = append(r.res.Profiles, heap)
	}
	for _, c := range []struct {
		done <-chan error
		path string
	}{{p.manager, p.managerPath}, {p.apiserver, p.apiserverPath}} {
		if err := <-c.done; err != nil {
			fmt.Fprintf(os.Stderr, "CPU profile: %v\n", err)
			continue
		}
		r.res.Profiles = append(r.res.Profiles, c.path)
	}
}
