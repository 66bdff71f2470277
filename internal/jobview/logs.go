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

package jobview

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// LogSource is what the follower needs from the cluster; the CLI's comes from the API (watches
// and pods/log), tests give a fake.
type LogSource interface {
	// Snapshot returns the TrainJob and its pods now.
	Snapshot(ctx context.Context) (*trainer.TrainJob, []corev1.Pod, error)
	// Changes returns a channel closed when the job or its pods may have changed after the
	// call. The follower takes it before Snapshot, so nothing between its read and its wait
	// is missed; it also reads again every Recheck, for a source that cannot tell.
	Changes(ctx context.Context) <-chan struct{}
	// Logs opens the log of one container. opts.Timestamps is always set by the follower.
	Logs(ctx context.Context, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error)
}

// LogOptions say which logs to print and how.
type LogOptions struct {
	// Step is the step to print ("node-0"); All prints every step instead.
	Step string
	All  bool
	// Follow waits for the step's pod, follows it into its next incarnations and stops when
	// the TrainJob is terminal.
	Follow bool
	// PodTimeout bounds the wait for a pod that does not exist or has not started (Follow only).
	PodTimeout time.Duration
	Tail       *int64
	Since      *time.Duration
	Timestamps bool
	// Prefix puts "[step] " before each line; All implies it.
	Prefix bool
}

// ErrStepNotFound means the job has no pod for the step asked (yet).
var ErrStepNotFound = errors.New("step not found")

// StepError explains a missing or not yet started step, naming the steps there are.
type StepError struct {
	Job, Step, Reason string
	Known             []string
}

func (e *StepError) Error() string {
	msg := fmt.Sprintf("TrainJob %s: step %q %s", e.Job, e.Step, e.Reason)
	if len(e.Known) > 0 {
		msg += " (steps: " + strings.Join(e.Known, ", ") + ")"
	}
	return msg
}

func (e *StepError) Unwrap() error { return ErrStepNotFound }

// Follower prints the logs of a TrainJob's steps.
type Follower struct {
	Source LogSource
	Out    io.Writer
	Opts   LogOptions

	mu sync.Mutex // serializes lines from several steps
}

// Run prints the logs and returns the TrainJob as last seen: with Follow, a caller reads the
// job's result from it.
func (f *Follower) Run(ctx context.Context) (*trainer.TrainJob, error) {
	if f.Opts.All {
		return f.runAll(ctx)
	}
	step := f.Opts.Step
	if step == "" {
		step = "node-0"
	}
	return f.runStep(ctx, step, f.Opts.Prefix, true)
}

// runAll follows every step, taking up steps as their pods appear.
func (f *Follower) runAll(ctx context.Context) (*trainer.TrainJob, error) {
	changes := f.Source.Changes(ctx)
	tj, pods, err := f.Source.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	steps := stepNames(Steps(pods))
	if !f.Opts.Follow {
		for _, s := range steps {
			if _, err := f.runStep(ctx, s, true, false); err != nil {
				return tj, err
			}
		}
		return tj, nil
	}
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	started := map[string]bool{}
	start := func(names []string) {
		for _, s := range names {
			if started[s] {
				continue
			}
			started[s] = true
			wg.Go(func() {
				if _, err := f.runStep(ctx, s, true, false); err != nil {
					errs <- err
				}
			})
		}
	}
	start(steps)
	for !trainjob.DeriveState(tj, nil, nil).State.Terminal() {
		if f.wait(ctx, changes, nil) != nil {
			break
		}
		changes = f.Source.Changes(ctx)
		if tj, pods, err = f.Source.Snapshot(ctx); err != nil {
			break
		}
		start(stepNames(Steps(pods)))
	}
	wg.Wait()
	close(errs)
	if err == nil {
		err = <-errs
	}
	return tj, err
}

func stepNames(steps []Step) []string {
	names := make([]string, len(steps))
	for i, s := range steps {
		names[i] = s.Name
	}
	return names
}

// runStep prints one step. strict makes a step that never got a pod an error.
func (f *Follower) runStep(ctx context.Context, step string, prefix, strict bool) (*trainer.TrainJob, error) {
	var deadline <-chan time.Time
	if f.Opts.Follow && f.Opts.PodTimeout > 0 {
		t := time.NewTimer(f.Opts.PodTimeout)
		defer t.Stop()
		deadline = t.C
	}
	cur := &stream{first: true}
	for {
		changes := f.Source.Changes(ctx)
		tj, pods, err := f.Source.Snapshot(ctx)
		if err != nil {
			return tj, err
		}
		steps := Steps(pods)
		i := slices.IndexFunc(steps, func(s Step) bool { return s.Name == step })
		terminal := trainjob.DeriveState(tj, nil, nil).State.Terminal()
		var p *corev1.Pod
		if i >= 0 {
			p = podNamed(pods, steps[i].Pod)
		}
		streamable := p != nil && started(p)
		seen := streamable && p.UID == cur.uid
		switch {
		case streamable && (!seen || !cur.done && !terminal):
			deadline = nil
			printed, err := f.copy(ctx, p, step, prefix, cur)
			if err != nil {
				return tj, err
			}
			if !f.Opts.Follow {
				return tj, nil
			}
			if printed || cur.done {
				continue
			}
			// A running pod's stream ended with nothing new: ask again once something changed.
		case seen && terminal:
			return tj, nil // the job ended and its pod's log was read
		case seen:
			// This pod's log is read; the job goes on: wait for the step's next pod or the end.
		case !f.Opts.Follow:
			reason := "has no pod"
			if p != nil {
				reason = fmt.Sprintf("has not started: pod %s is %s; use -f to wait for it", p.Name, p.Status.Phase)
			}
			return tj, &StepError{Job: tj.Name, Step: step, Reason: reason, Known: stepNames(steps)}
		case terminal:
			if cur.uid == "" && strict {
				reason := "never ran: the TrainJob is " + string(trainjob.DeriveState(tj, nil, nil).State)
				return tj, &StepError{Job: tj.Name, Step: step, Reason: reason, Known: stepNames(steps)}
			}
			return tj, nil
		}
		if err := f.wait(ctx, changes, deadline); err != nil {
			if errors.Is(err, errPodTimeout) {
				return tj, &StepError{Job: tj.Name, Step: step, Reason: fmt.Sprintf("did not start within %s", f.Opts.PodTimeout), Known: stepNames(steps)}
			}
			return tj, err
		}
	}
}

var errPodTimeout = errors.New("timed out waiting for the pod")

// Recheck bounds every wait for a change: the state is read again after it even if the source
// told of nothing (a watch that could not be opened).
const Recheck = 2 * time.Second

// wait returns when changes is closed, after Recheck, or with an error at the deadline or the
// end of ctx.
func (f *Follower) wait(ctx context.Context, changes <-chan struct{}, deadline <-chan time.Time) error {
	t := time.NewTimer(Recheck)
	defer t.Stop()
	select {
	case <-changes:
		return nil
	case <-t.C:
		return nil
	case <-deadline:
		return errPodTimeout
	case <-ctx.Done():
		return ctx.Err()
	}
}

func podNamed(pods []corev1.Pod, name string) *corev1.Pod {
	for i := range pods {
		if pods[i].Name == name {
			return &pods[i]
		}
	}
	return nil
}

// started: a pod has logs once a container ran; Pending pods have none to give.
func started(p *corev1.Pod) bool {
	if p.Status.Phase != corev1.PodPending && p.Status.Phase != "" {
		return true
	}
	for _, cs := range p.Status.ContainerStatuses {
		if cs.State.Running != nil || cs.State.Terminated != nil {
			return true
		}
	}
	return false
}

func finished(p *corev1.Pod) bool {
	return p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed
}

// stream is the follower's place in one step: the pod it reads and the last line it printed,
// so a reconnect to the same pod prints nothing twice.
type stream struct {
	uid  types.UID
	last time.Time
	// resume is the last line printed before the stream was opened again: lines up to it are
	// the repeat of a reconnect. Within one stream, lines sharing a timestamp are all printed.
	resume time.Time
	done   bool
	first  bool
}

// copy prints a pod's log from where the follower left it and reports whether it printed.
func (f *Follower) copy(ctx context.Context, p *corev1.Pod, step string, prefix bool, cur *stream) (bool, error) {
	opts := &corev1.PodLogOptions{Follow: f.Opts.Follow, Timestamps: true}
	if p.UID != cur.uid {
		// A new incarnation is read from its start; --tail and --since apply to the first pod.
		cur.uid, cur.last, cur.resume, cur.done = p.UID, time.Time{}, time.Time{}, false
		if cur.first {
			opts.TailLines = f.Opts.Tail
			if f.Opts.Since != nil {
				opts.SinceSeconds = ptrInt64(int64(f.Opts.Since.Seconds()))
			}
		}
	} else if !cur.last.IsZero() {
		opts.SinceTime = &metav1.Time{Time: cur.last}
		// sinceTime has a resolution of seconds: the new stream repeats what was printed.
		cur.resume = cur.last
	}
	cur.first = false
	wasFinished := finished(p)
	streamCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	live := &liveStream{}
	live.touch()
	if f.Opts.Follow {
		go f.endStream(streamCtx, cancel, live, p, step)
	}
	rc, err := f.Source.Logs(streamCtx, p.Name, MainContainer(p), opts)
	if err != nil {
		if live.ended.Load() && ctx.Err() == nil {
			cur.done = true
			return false, nil
		}
		return false, fmt.Errorf("reading the log of pod %s: %w", p.Name, err)
	}
	defer func() { _ = rc.Close() }()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	printed := false
	for sc.Scan() {
		live.touch()
		printed = f.line(sc.Text(), step, prefix, cur) || printed
	}
	if err := sc.Err(); err != nil && streamCtx.Err() == nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return printed, fmt.Errorf("reading the log of pod %s: %w", p.Name, err)
	}
	// The whole log of a finished pod has been read; a running pod's stream can end early (a
	// dropped connection), and is opened again from the last line.
	cur.done = wasFinished || live.ended.Load() || !f.Opts.Follow
	return printed, ctx.Err()
}

// EndGrace is how long a followed stream may stay quiet after its pod finished, went away or
// the job ended: the last lines arrive, then the stream is closed. A kubelet closes it itself
// when the container exits; kwok (the local cluster) and stuck connections never do.
const EndGrace = time.Second

// liveStream is what the reader of a followed stream and its endStream share.
type liveStream struct {
	ended    atomic.Bool  // endStream closed the stream: its log is read
	lastLine atomic.Int64 // unix nanoseconds of the last line read, or of the stream's end
}

func (l *liveStream) touch() { l.lastLine.Store(time.Now().UnixNano()) }

// endStream closes a followed stream once there is nothing more to follow in it and it has
// been quiet for EndGrace, so a long last burst of lines is never cut.
func (f *Follower) endStream(ctx context.Context, cancel context.CancelFunc, live *liveStream, p *corev1.Pod, step string) {
	for {
		changes := f.Source.Changes(ctx)
		tj, pods, err := f.Source.Snapshot(ctx)
		if err == nil && streamOver(tj, pods, p, step) {
			break
		}
		if f.wait(ctx, changes, nil) != nil {
			return
		}
	}
	live.touch()
	for {
		quiet := time.Since(time.Unix(0, live.lastLine.Load()))
		if quiet >= EndGrace {
			break
		}
		t := time.NewTimer(EndGrace - quiet)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
	live.ended.Store(true)
	cancel()
}

// streamOver: the pod finished or is no longer the step's newest, or the job ended.
func streamOver(tj *trainer.TrainJob, pods []corev1.Pod, p *corev1.Pod, step string) bool {
	if trainjob.DeriveState(tj, nil, nil).State.Terminal() {
		return true
	}
	for _, s := range Steps(pods) {
		if s.Name == step {
			cur := podNamed(pods, s.Pod)
			return cur == nil || cur.UID != p.UID || finished(cur)
		}
	}
	return true
}

// line prints one log line unless it was printed before a reconnect.
func (f *Follower) line(raw, step string, prefix bool, cur *stream) bool {
	text := raw
	if ts, rest, ok := strings.Cut(raw, " "); ok {
		if t, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			if !cur.resume.IsZero() && !t.After(cur.resume) {
				return false
			}
			if t.After(cur.last) {
				cur.last = t
			}
			if !f.Opts.Timestamps {
				text = rest
			}
		}
	}
	if prefix || f.Opts.All {
		text = "[" + step + "] " + text
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, _ = io.WriteString(f.Out, text+"\n")
	return true
}

func ptrInt64(v int64) *int64 { return &v }
