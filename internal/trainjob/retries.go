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

package trainjob

import (
	"fmt"
	"slices"
	"strings"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// The Job controller's defaults (kubernetes.io/docs/concepts/workloads/controllers/job): six
// retries, and a failed pod replaced after 10 s, doubled per failure, at most 6 minutes.
const (
	defaultBackoffLimit = 6
	firstBackoff        = 10 * time.Second
	maxBackoff          = 6 * time.Minute
)

// Children are a TrainJob's JobSet's Jobs and pods. status.jobsStatus counts failed Jobs only:
// while a Job retries its failed pods (backoffLimit, 6 by default, about 10 minutes) it counts
// none, so only the Jobs' own counts and the pods tell a retrying job from one starting.
type Children struct {
	Jobs []batchv1.Job
	Pods []corev1.Pod
	// Now dates the next retry; the zero time leaves it out.
	Now time.Time
}

// DeriveState is the one state of a TrainJob, the word the command line, the web UI, the
// metrics and local runs show. It comes from the TrainJob's conditions and spec.suspend, then
// status.jobsStatus, then what its Jobs and pods say (ch): a job whose pods failed and are being
// retried is Restarting, with the failures, the exit codes and the retry count. wl is its Kueue
// Workload; wl and ch are nil when unknown (Kueue not installed, children not read).
func DeriveState(tj *trainer.TrainJob, wl *Workload, ch *Children) Derived {
	d := statusState(tj, wl)
	if ch == nil || !mayRetry(tj, d) {
		return d
	}
	r := RetriesOf(ch)
	switch {
	case r == nil, d.State == StateRestarting: // a failed Job (the JobSet's count) says more
		return d
	case r.Restarting:
		return Derived{StateRestarting, r.String()}
	case d.State == StateRunning && d.Message == "":
		return Derived{StateRunning, fmt.Sprintf("recovered from %s", r.failures())}
	}
	return d
}

// mayRetry: only a job that runs, with a JobSet, can have Jobs retrying pods; whether to read a
// job's Jobs and pods at all (MayRetry) is the same question.
func mayRetry(tj *trainer.TrainJob, d Derived) bool {
	return len(tj.Status.JobsStatus) > 0 && !d.State.Terminal() && d.State != StateSuspended &&
		d.State != StateQueued && (tj.Status.BuildError == nil || d.State != StateCreated)
}

// MayRetry reports whether tj's Jobs and pods can change its state: DeriveState reads them
// only then, so readers fetch them only then.
func MayRetry(tj *trainer.TrainJob) bool { return mayRetry(tj, statusState(tj, nil)) }

// Retries is what the unfinished Jobs of a TrainJob say of their failed pods.
type Retries struct {
	// FailedPods adds up the unfinished Jobs' status.failed.
	FailedPods int32 `json:"failedPods"`
	// Retry and Limit are the most retried Job's failures and backoffLimit; Limit is 0 under
	// backoffLimitPerIndex, whose count is per index.
	Retry int32 `json:"retry"`
	Limit int32 `json:"limit,omitempty"`
	// Exits are the failed pods' terminations, e.g. "exit 137 OOMKilled", each once.
	Exits []string `json:"exits,omitempty"`
	// Restarting: some failed pod is not replaced and ready yet.
	Restarting bool `json:"restarting"`
	// NextRetry is when the Job controller's backoff lets it create the next pod, if still ahead.
	NextRetry *metav1.Time `json:"nextRetry,omitempty"`
	now       time.Time
}

// RetriesOf reads the Jobs still running with failed pods; nil when there is none.
func RetriesOf(ch *Children) *Retries {
	var r *Retries
	retrying := map[types.UID]bool{}
	var waitFrom map[types.UID]int32 // Jobs short of pods: the failures their backoff counts
	for i := range ch.Jobs {
		j := &ch.Jobs[i]
		if j.Status.Failed == 0 || jobFinished(j) {
			continue
		}
		if r == nil {
			r = &Retries{now: ch.Now}
		}
		retrying[j.UID] = true
		r.FailedPods += j.Status.Failed
		if j.Status.Failed > r.Retry {
			r.Retry, r.Limit = j.Status.Failed, backoffLimit(j)
		}
		want := ptrOr(j.Spec.Parallelism, 1)
		ready := j.Status.Active
		if j.Status.Ready != nil {
			ready = *j.Status.Ready
		}
		if ready+j.Status.Succeeded < want {
			r.Restarting = true
		}
		// The backoff counts the failures since the last success, so it is only known
		// without one.
		if j.Status.Active+j.Status.Succeeded < want && j.Status.Succeeded == 0 {
			if waitFrom == nil {
				waitFrom = map[types.UID]int32{}
			}
			waitFrom[j.UID] = j.Status.Failed
		}
	}
	if r == nil {
		return nil
	}
	last := map[types.UID]time.Time{}
	for i := range ch.Pods {
		p := &ch.Pods[i]
		owner := metav1.GetControllerOf(p)
		if p.Status.Phase != corev1.PodFailed || owner == nil || !retrying[owner.UID] {
			continue
		}
		if t := terminated(p); t != nil {
			exit := fmt.Sprintf("exit %d", t.ExitCode)
			if t.Reason != "" && t.Reason != "Error" {
				exit += " " + t.Reason
			}
			if !slices.Contains(r.Exits, exit) {
				r.Exits = append(r.Exits, exit)
			}
			if t.FinishedAt.After(last[owner.UID]) {
				last[owner.UID] = t.FinishedAt.Time
			}
		}
	}
	r.NextRetry = nextRetry(waitFrom, last, ch.Now)
	return r
}

// nextRetry is the soonest pod creation the Jobs short of pods wait for: the last failure plus
// the backoff, when it is still ahead.
func nextRetry(waitFrom map[types.UID]int32, last map[types.UID]time.Time, now time.Time) *metav1.Time {
	var next time.Time
	for uid, failures := range waitFrom {
		at, ok := last[uid]
		if !ok || now.IsZero() {
			continue
		}
		backoff := firstBackoff
		for i := int32(1); i < failures && backoff < maxBackoff; i++ {
			backoff *= 2
		}
		backoff = min(backoff, maxBackoff)
		if t := at.Add(backoff); t.After(now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	if next.IsZero() {
		return nil
	}
	return &metav1.Time{Time: next}
}

// String is the message of a Restarting job: "2 pods failed (exit 3), retry 2 of 6, next in ~15s".
func (r *Retries) String() string {
	s := plural(r.FailedPods, "pod") + " failed"
	if len(r.Exits) > 0 {
		s += " (" + strings.Join(r.Exits, ", ") + ")"
	}
	if r.Limit > 0 {
		s += fmt.Sprintf(", retry %d of %d", r.Retry, r.Limit)
	}
	if r.NextRetry != nil {
		s += fmt.Sprintf(", next in ~%s", r.NextRetry.Sub(r.now).Round(time.Second))
	}
	return s
}

func (r *Retries) failures() string {
	s := plural(r.FailedPods, "pod failure")
	if r.Limit > 0 {
		s += fmt.Sprintf(" (retry %d of %d)", r.Retry, r.Limit)
	}
	return s
}

func plural(n int32, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func backoffLimit(j *batchv1.Job) int32 {
	if j.Spec.BackoffLimitPerIndex != nil {
		return 0
	}
	return ptrOr(j.Spec.BackoffLimit, defaultBackoffLimit)
}

func jobFinished(j *batchv1.Job) bool {
	for _, c := range j.Status.Conditions {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// terminated is the failure of a pod: its first container that exited non-zero.
func terminated(p *corev1.Pod) *corev1.ContainerStateTerminated {
	for _, cs := range p.Status.ContainerStatuses {
		if t := cs.State.Terminated; t != nil && t.ExitCode != 0 {
			return t
		}
	}
	return nil
}

func ptrOr(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}
