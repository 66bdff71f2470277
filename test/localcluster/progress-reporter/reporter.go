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
	"log"
	"net/http"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// postFunc sends one report; the sender's, or a test's.
type postFunc func(ctx context.Context, t *target, status *trainer.TrainJobTrainerStatus) (result, error)

// reporter decides, on every tick, which TrainJobs report now, and sends each report in the
// background so that one slow answer (the server holds a report up to 2 s for the job's rate
// limit) does not delay the others. One report per TrainJob is in flight at a time.
type reporter struct {
	post        postFunc
	forget      func(running map[string]bool)
	sched       schedule
	podDuration time.Duration
	now         func() time.Time
	logf        func(format string, args ...any)

	mu       sync.Mutex
	jobs     map[string]*job // by URL: one per TrainJob
	inflight sync.WaitGroup
}

// job is the reporter's record of one TrainJob's run.
type job struct {
	jobState
	sending, reported bool
	// problem is the last thing that kept the job from reporting, logged once.
	problem string
	// runEnd is when kwok ends the leading pod: a pod that started before belongs to the same
	// run (another rank), one that started after to a new run (a restart).
	runEnd time.Time
}

func newReporter(s *sender, sched schedule, podDuration time.Duration) *reporter {
	return &reporter{
		post: s.send, forget: s.forget, sched: sched, podDuration: podDuration,
		now: time.Now, logf: log.Printf, jobs: map[string]*job{},
	}
}

// tick reports for the TrainJobs of the running pods that are due.
func (r *reporter) tick(ctx context.Context, pods []*corev1.Pod) {
	lead := leaders(pods)
	running := map[string]bool{}
	for _, p := range pods {
		running[string(p.UID)] = true
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for url, j := range r.jobs {
		if _, ok := lead[url]; !ok && !j.sending {
			delete(r.jobs, url)
		}
	}
	for url, pod := range lead {
		r.consider(ctx, url, pod)
	}
	if r.forget != nil {
		r.forget(running)
	}
}

// consider starts a report for the TrainJob of url from its leading pod, if one is due.
// r.mu is held.
func (r *reporter) consider(ctx context.Context, url string, pod *corev1.Pod) {
	started := pod.Status.StartTime.Time
	j := r.jobs[url]
	switch {
	case j == nil || j.podUID != string(pod.UID) && !started.Before(j.runEnd):
		// A new run (or pods that replaced those of an ended one): the curve starts over.
		j = &job{jobState: jobState{podUID: string(pod.UID)}}
		r.jobs[url] = j
	case j.podUID != string(pod.UID):
		// Another rank of the same run leads now (the first ended a moment earlier): the run
		// goes on, its last report sent at most once.
		j.podUID = string(pod.UID)
	}
	if j.sending {
		return
	}
	t, err := targetOf(pod)
	if err != nil {
		r.problem(j, fmt.Sprintf("pod %s/%s cannot report: %v", pod.Namespace, pod.Name, err))
		return
	}
	curve, err := curveOf(pod, t.container, r.podDuration)
	if err != nil {
		r.problem(j, fmt.Sprintf("pod %s/%s: %v", pod.Namespace, pod.Name, err))
		return
	}
	j.runEnd = started.Add(curve.Duration)
	now := r.now()
	send, final := r.sched.due(now, started, curve.Duration, j.jobState)
	if !send {
		return
	}
	elapsed := now.Sub(started)
	if final {
		elapsed = curve.Duration
	}
	point := curve.At(elapsed)
	j.sending, j.last = true, now
	r.inflight.Go(func() {
		res, err := r.post(ctx, t, point.Status(now))
		r.done(url, t, final, point, res, err)
	})
}

// done records the answer to a report.
func (r *reporter) done(url string, t *target, final bool, p Point, res result, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j := r.jobs[url]
	if j == nil || j.podUID != t.podUID {
		return
	}
	j.sending = false
	switch {
	case err != nil:
		r.problem(j, fmt.Sprintf("pod %s/%s: reporting: %v", t.namespace, t.pod, err))
	case res.code == http.StatusOK:
		if !j.reported || j.problem != "" {
			r.logf("pod %s/%s reports to %s: %d%%, loss %.6g", t.namespace, t.pod, t.url, p.Percent, p.Loss)
		}
		j.problem, j.reported = "", true
		if final {
			j.finalSent = true
			r.logf("pod %s/%s: last report: %d%%, loss %.6g", t.namespace, t.pod, p.Percent, p.Loss)
		}
	case res.code == http.StatusTooManyRequests:
		j.notBefore = r.now().Add(res.retryAfter)
		r.problem(j, fmt.Sprintf("pod %s/%s: the status server asks to wait %s", t.namespace, t.pod, res.retryAfter))
	default:
		r.problem(j, fmt.Sprintf("pod %s/%s: the status server answered %d: %s", t.namespace, t.pod, res.code, res.body))
	}
}

// problem logs what keeps a job from reporting, once until it changes.
func (r *reporter) problem(j *job, msg string) {
	if j.problem != msg {
		j.problem = msg
		r.logf("%s", msg)
	}
}
