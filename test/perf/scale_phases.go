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
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/localcluster"
)

// wave creates n TrainJobs from the start-th, waits until each has its JobSet and is Complete,
// and samples the manager over everything settled so far.
func (r *scaleRun) wave(ctx context.Context, start, n int) (ScalePoint, error) {
	o := r.o
	sent := make([]time.Time, n)
	begin := time.Now()
	if _, err := forEach(ctx, n, o.parallel, func(ctx context.Context, i int) error {
		sent[i] = time.Now()
		return createIgnoringExists(ctx, r.client, newTrainJob(benchNamespace, trainJobName(start+i), int32(o.nodes)))
	}); err != nil {
		return ScalePoint{}, err
	}
	if err := r.jobsets.waitSeen(ctx, start+n, o.timeout, "JobSets"); err != nil {
		return ScalePoint{}, err
	}
	seen, _ := r.jobsets.snapshot()
	latencies := make([]float64, 0, n)
	var last time.Time
	for i := range n {
		at := seen[trainJobName(start+i)]
		latencies = append(latencies, millis(at.Sub(sent[i])))
		if at.After(last) {
			last = at
		}
	}
	if err := r.trainJob.waitDone(ctx, start+n, o.timeout, "TrainJobs Complete"); err != nil {
		return ScalePoint{}, err
	}
	settled := time.Since(begin)
	p, err := r.sample(ctx, start+n)
	if err != nil {
		return ScalePoint{}, err
	}
	if o.scale.deletePods {
		if err := r.deleteSucceededPods(ctx); err != nil {
			return ScalePoint{}, err
		}
	}
	p.WaveSeconds = last.Sub(begin).Seconds()
	p.SettledSeconds = settled.Seconds()
	p.Latency = summarize(latencies)
	return p, nil
}

// deleteSucceededPods deletes the benchmark's finished pods, as a Job's TTL or the pod garbage
// collector would. Gantry's manager reads no pods, so its memory does not change; the simulated
// cluster's work does: with the pods kept, a second wave of 4,000 pods took twice the first
// (kube-apiserver, the scheduler and kwok list and watch every pod on two cores).
func (r *scaleRun) deleteSucceededPods(ctx context.Context) error {
	return deleteAllRetrying(ctx, r.client, &corev1.Pod{}, deletePodAttempts, client.InNamespace(benchNamespace),
		client.MatchingFields{"status.phase": string(corev1.PodSucceeded)}, client.GracePeriodSeconds(0))
}

// deletePodAttempts bounds deleteAllRetrying for the wave's pods.
const deletePodAttempts = 5

// deleteAllRetrying sends a delete-collection until one succeeds, at most attempts times. The
// apiserver deletes a collection one object at a time within its request timeout (a minute): on
// the loaded machine 4,000 pods took longer, the stream was reset, and the run of 50 minutes was
// lost. Each attempt deletes what it reaches, so the next has less to do.
func deleteAllRetrying(ctx context.Context, c client.Client, obj client.Object, attempts int, opts ...client.DeleteAllOfOption) error {
	var err error
	for attempt := 1; attempt <= attempts; attempt++ {
		if err = c.DeleteAllOf(ctx, obj, opts...); err == nil || ctx.Err() != nil {
			break
		}
		fmt.Fprintf(os.Stderr, "bench: deleting the wave's finished pods, attempt %d of %d: %v\n", attempt, attempts, err)
	}
	if err != nil {
		return fmt.Errorf("deleting the wave's Succeeded pods (%d attempts): %w", attempts, err)
	}
	return nil
}

// idle watches the manager over every settled TrainJob for the idle window: its writes (audit
// log) and CPU.
func (r *scaleRun) idle(ctx context.Context) (ScaleIdle, error) {
	before, err := r.sample(ctx, r.o.n)
	if err != nil {
		return ScaleIdle{}, err
	}
	from := time.Now()
	select {
	case <-time.After(r.o.scale.idle):
	case <-ctx.Done():
		return ScaleIdle{}, ctx.Err()
	}
	to := time.Now()
	after, err := r.sample(ctx, r.o.n)
	if err != nil {
		return ScaleIdle{}, err
	}
	rows, err := auditWrites(r.cluster.AuditLog(), localcluster.ManagerUser, from, to)
	if err != nil {
		return ScaleIdle{}, err
	}
	return ScaleIdle{
		Seconds: to.Sub(from).Seconds(), CPUSeconds: after.CPUSeconds - before.CPUSeconds,
		TrainJobWrites: perTrainJob(rows), Writes: rows, RSSMiB: after.RSSMiB,
	}, nil
}

// freshTrainJob is created right after the restarted manager is ready.
const freshTrainJob = "fresh-after-restart"

// restart kills the manager with every TrainJob settled, starts it again, and times how long it
// takes to be ready (/readyz), to build a TrainJob created then, and to have reconciled every
// TrainJob with its work queue empty.
func (r *scaleRun) restart(ctx context.Context) (ScaleRestart, error) {
	if err := r.cluster.Kill(scaleManager); err != nil {
		return ScaleRestart{}, err
	}
	begin := time.Now()
	if err := r.cluster.Restart(scaleManager); err != nil {
		return ScaleRestart{}, err
	}
	if err := r.cluster.WaitHealthy(ctx, scaleManager, r.o.timeout); err != nil {
		return ScaleRestart{}, err
	}
	res := ScaleRestart{ReadySeconds: time.Since(begin).Seconds()}
	// A TrainJob submitted while the restarted manager works through the settled ones: how long
	// it waits for its JobSet is what a user sees of the catch-up.
	created := time.Now()
	if err := createIgnoringExists(ctx, r.client, newTrainJob(benchNamespace, freshTrainJob, int32(r.o.nodes))); err != nil {
		return res, err
	}
	var scrapeErr error
	if !poll(ctx, 100*time.Millisecond, r.o.timeout, func() bool {
		if seen, _ := r.jobsets.snapshot(); res.FreshJobSetSeconds == 0 && !seen[freshTrainJob].IsZero() {
			res.FreshJobSetSeconds = seen[freshTrainJob].Sub(created).Seconds()
		}
		var m metrics
		m, scrapeErr = r.scrape(ctx)
		return scrapeErr == nil && res.FreshJobSetSeconds > 0 && caughtUp(m, r.o.n+1)
	}) {
		if scrapeErr != nil {
			return res, fmt.Errorf("scraping the restarted manager: %w", scrapeErr)
		}
		return res, fmt.Errorf("the restarted manager had not reconciled %d TrainJobs with an empty queue within %s", r.o.n, r.o.timeout)
	}
	res.CaughtUpSeconds = time.Since(begin).Seconds()
	p, err := r.sample(ctx, r.o.n)
	if err != nil {
		return res, err
	}
	res.RSSMiB, res.CPUSeconds = p.RSSMiB, p.CPUSeconds
	return res, nil
}

// caughtUp says whether the TrainJob controller has reconciled at least n TrainJobs and its
// queue is empty.
func caughtUp(m metrics, n int) bool {
	ctrl := map[string]string{"controller": trainJobController}
	return m.sum("controller_runtime_reconcile_total", ctrl) >= float64(n) &&
		m.sum("workqueue_depth", map[string]string{"name": trainJobController}) == 0
}
