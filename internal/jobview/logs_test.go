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
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// fakeCluster is a LogSource whose pods and log lines the test changes while a follower runs.
type fakeCluster struct {
	mu      sync.Mutex
	changed Signal
	tj      *trainer.TrainJob
	pods    map[string]*corev1.Pod
	logs    map[string][]string // pod name -> lines with timestamps
	// cutAfter ends the next stream of a pod after that many lines, as a dropped connection.
	cutAfter map[string]int
	clock    time.Time
	opened   []string
	// endless streams never end by themselves, as kwok's (the local cluster's) do.
	endless bool
	// afterRead, when set, runs once right after the next Snapshot has read the state: a
	// change that lands between a reader's read and its wait.
	afterRead func()
}

func newFakeCluster() *fakeCluster {
	return &fakeCluster{
		tj:   &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}},
		pods: map[string]*corev1.Pod{}, logs: map[string][]string{}, cutAfter: map[string]int{},
		clock: t0,
	}
}

func (c *fakeCluster) update(f func()) {
	c.mu.Lock()
	f()
	c.mu.Unlock()
	c.changed.Notify()
}

func (c *fakeCluster) addPod(name, rjob, idx string, age int, phase corev1.PodPhase) {
	c.update(func() {
		p := pod(name, rjob, "0", idx, age, phase, rjob)
		p.UID = types.UID("uid-" + name)
		c.pods[name] = &p
	})
}

func (c *fakeCluster) setPhase(name string, phase corev1.PodPhase) {
	c.update(func() { c.pods[name].Status.Phase = phase })
}

func (c *fakeCluster) deletePod(name string) { c.update(func() { delete(c.pods, name) }) }

func (c *fakeCluster) write(podName string, lines ...string) {
	c.update(func() {
		for _, l := range lines {
			c.clock = c.clock.Add(time.Millisecond)
			c.logs[podName] = append(c.logs[podName], c.clock.Format(time.RFC3339Nano)+" "+l)
		}
	})
}

func (c *fakeCluster) finish(state string) {
	c.update(func() {
		c.tj.Status.Conditions = []metav1.Condition{{Type: state, Status: metav1.ConditionTrue, Message: "done"}}
	})
}

func (c *fakeCluster) Snapshot(context.Context) (*trainer.TrainJob, []corev1.Pod, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var pods []corev1.Pod
	for _, p := range c.pods {
		pods = append(pods, *p.DeepCopy())
	}
	tj := c.tj.DeepCopy()
	if f := c.afterRead; f != nil {
		c.afterRead = nil
		c.mu.Unlock()
		f()
		c.mu.Lock()
	}
	return tj, pods, nil
}

func (c *fakeCluster) Changes(context.Context) <-chan struct{} { return c.changed.Wait() }

// Logs streams the pod's lines from opts.SinceTime; with Follow it waits for more until the
// pod finishes or goes away.
func (c *fakeCluster) Logs(ctx context.Context, pod, _ string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	pr, pw := io.Pipe()
	c.mu.Lock()
	c.opened = append(c.opened, pod)
	cut := c.cutAfter[pod]
	delete(c.cutAfter, pod)
	c.mu.Unlock()
	go func() {
		sent := 0
		for {
			c.mu.Lock()
			lines := c.logs[pod]
			p, exists := c.pods[pod]
			done := (!exists || finished(p)) && !c.endless
			ch := c.changed.Wait()
			c.mu.Unlock()
			for ; sent < len(lines); sent++ {
				if opts.SinceTime != nil {
					ts, _, _ := strings.Cut(lines[sent], " ")
					// The API's sinceTime has a resolution of seconds: it sends lines again.
					if t, _ := time.Parse(time.RFC3339Nano, ts); t.Before(opts.SinceTime.Truncate(time.Second)) {
						continue
					}
				}
				if cut > 0 && sent >= cut {
					_ = pw.Close()
					return
				}
				if _, err := io.WriteString(pw, lines[sent]+"\n"); err != nil {
					return
				}
			}
			if done || !opts.Follow {
				_ = pw.Close()
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				_ = pw.CloseWithError(ctx.Err())
				return
			}
		}
	}()
	return pr, nil
}

// lockedBuffer collects output and tells when it holds a line.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
	got   chan string
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for l := range strings.SplitSeq(strings.TrimSuffix(string(p), "\n"), "\n") {
		b.lines = append(b.lines, l)
		if b.got != nil {
			b.got <- l
		}
	}
	return len(p), nil
}

func (b *lockedBuffer) all() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

func runFollower(t *testing.T, c *fakeCluster, out *lockedBuffer, opts LogOptions) chan error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	done := make(chan error, 1)
	go func() {
		_, err := (&Follower{Source: c, Out: out, Opts: opts}).Run(ctx)
		done <- err
	}()
	return done
}

func waitLine(t *testing.T, out *lockedBuffer, want string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		select {
		case l := <-out.got:
			if l == want {
				return time.Since(start)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no line %q; got %q", want, out.all())
		}
	}
}

// TestFollowWaitsForPod: -f started before the pod exists prints its first line as soon as
// the pod runs, and follows the pod recreated under the same step.
func TestFollowWaitsForPodAndRestarts(t *testing.T) {
	c := newFakeCluster()
	out := &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{Follow: true})

	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodPending)
	c.write("a-node-0-0-aaaaa", "epoch 1")
	c.setPhase("a-node-0-0-aaaaa", corev1.PodRunning)
	if d := waitLine(t, out, "epoch 1"); d > time.Second {
		t.Errorf("first line printed %s after the pod ran, want under 1s", d)
	}
	c.write("a-node-0-0-aaaaa", "epoch 2")
	waitLine(t, out, "epoch 2")

	// The pod fails and JobSet recreates it under the same step.
	c.setPhase("a-node-0-0-aaaaa", corev1.PodFailed)
	c.deletePod("a-node-0-0-aaaaa")
	c.addPod("a-node-0-0-bbbbb", "node", "0", 5, corev1.PodRunning)
	c.write("a-node-0-0-bbbbb", "restarted")
	waitLine(t, out, "restarted")
	c.write("a-node-0-0-bbbbb", "last")
	waitLine(t, out, "last")
	c.setPhase("a-node-0-0-bbbbb", corev1.PodSucceeded)
	c.finish(trainer.TrainJobComplete)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"epoch 1", "epoch 2", "restarted", "last"}, out.all()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestFollowReconnects: a stream that drops is opened again without printing a line twice.
func TestFollowReconnects(t *testing.T) {
	c := newFakeCluster()
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodRunning)
	c.write("a-node-0-0-aaaaa", "1", "2", "3")
	c.cutAfter["a-node-0-0-aaaaa"] = 2
	out := &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{Follow: true, Timestamps: false})
	waitLine(t, out, "3")
	c.write("a-node-0-0-aaaaa", "4")
	waitLine(t, out, "4")
	c.setPhase("a-node-0-0-aaaaa", corev1.PodFailed)
	c.finish(trainer.TrainJobFailed)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4"}, out.all()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

func TestAllSteps(t *testing.T) {
	c := newFakeCluster()
	c.addPod("a-dataset-initializer-0-0-ddddd", "dataset-initializer", "0", 0, corev1.PodSucceeded)
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodRunning)
	c.addPod("a-node-0-1-bbbbb", "node", "1", 1, corev1.PodRunning)
	c.write("a-dataset-initializer-0-0-ddddd", "downloaded")
	c.write("a-node-0-0-aaaaa", "r0 a", "r0 b")
	c.write("a-node-0-1-bbbbb", "r1 a", "r1 b")
	out := &lockedBuffer{}
	if _, err := (&Follower{Source: c, Out: out, Opts: LogOptions{All: true}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"[dataset-initializer] downloaded", "[node-0] r0 a", "[node-0] r0 b", "[node-1] r1 a", "[node-1] r1 b"}
	if diff := cmp.Diff(want, out.all()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}

	// Followed, each step keeps its own order while lines of steps interleave.
	out = &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{All: true, Follow: true, Timestamps: true})
	c.addPod("a-node-0-2-ccccc", "node", "2", 3, corev1.PodRunning)
	c.write("a-node-0-2-ccccc", "r2 a")
	waitLine(t, out, "[node-2] "+t0.Add(6*time.Millisecond).Format(time.RFC3339Nano)+" r2 a")
	for _, p := range []string{"a-node-0-0-aaaaa", "a-node-0-1-bbbbb", "a-node-0-2-ccccc"} {
		c.setPhase(p, corev1.PodSucceeded)
	}
	c.finish(trainer.TrainJobComplete)
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	perStep := map[string][]string{}
	for _, l := range out.all() {
		step, rest, _ := strings.Cut(l, " ")
		_, text, _ := strings.Cut(rest, " ")
		perStep[step] = append(perStep[step], text)
	}
	wantPerStep := map[string][]string{
		"[dataset-initializer]": {"downloaded"}, "[node-0]": {"r0 a", "r0 b"}, "[node-1]": {"r1 a", "r1 b"}, "[node-2]": {"r2 a"},
	}
	if diff := cmp.Diff(wantPerStep, perStep); diff != "" {
		t.Errorf("per-step output (-want +got):\n%s", diff)
	}
}

func TestStepErrors(t *testing.T) {
	c := newFakeCluster()
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodPending)
	cases := []struct {
		name string
		opts LogOptions
		want string
	}{
		{"missing step", LogOptions{Step: "node-7"}, `TrainJob a: step "node-7" has no pod (steps: node-0)`},
		{"pending pod", LogOptions{Step: "node-0"}, `TrainJob a: step "node-0" has not started: pod a-node-0-0-aaaaa is Pending; use -f to wait for it (steps: node-0)`},
		{"pod timeout", LogOptions{Step: "node-0", Follow: true, PodTimeout: 50 * time.Millisecond}, `TrainJob a: step "node-0" did not start within 50ms (steps: node-0)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := (&Follower{Source: c, Out: io.Discard, Opts: tc.opts}).Run(context.Background())
			if err == nil || err.Error() != tc.want || !errors.Is(err, ErrStepNotFound) {
				t.Errorf("Run error = %v, want %q wrapping ErrStepNotFound", err, tc.want)
			}
		})
	}
	// A step that never ran on a finished job is an error, not empty output (sdk#365).
	c.finish(trainer.TrainJobFailed)
	_, err := (&Follower{Source: c, Out: io.Discard, Opts: LogOptions{Step: "node-0", Follow: true}}).Run(context.Background())
	if want := `TrainJob a: step "node-0" never ran: the TrainJob is Failed (steps: node-0)`; fmt.Sprint(err) != want {
		t.Errorf("Run error = %v, want %q", err, want)
	}
}

// TestFollowEndsEndlessStreams: a stream that does not end when its pod finishes (kwok's) is
// closed by the follower shortly after, so -f still ends with the job.
func TestFollowEndsEndlessStreams(t *testing.T) {
	c := newFakeCluster()
	c.endless = true
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodRunning)
	c.write("a-node-0-0-aaaaa", "working")
	out := &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{Follow: true})
	waitLine(t, out, "working")
	c.write("a-node-0-0-aaaaa", "done")
	waitLine(t, out, "done")
	c.setPhase("a-node-0-0-aaaaa", corev1.PodSucceeded)
	c.finish(trainer.TrainJobComplete)
	ended := time.Now()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
		if d := time.Since(ended); d > EndGrace+time.Second {
			t.Errorf("the follower ended %s after the job, want about %s", d, EndGrace)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the follower did not end with the job")
	}
	if diff := cmp.Diff([]string{"working", "done"}, out.all()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}

// TestFollowMissesNoChange: the pod finishing and the job ending just after the follower read
// the cluster, and before it waits, still end -f: a change is never lost between the read and
// the wait, even when nothing changes after it.
func TestFollowMissesNoChange(t *testing.T) {
	c := newFakeCluster()
	c.endless = true
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodRunning)
	out := &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{Follow: true})
	c.write("a-node-0-0-aaaaa", "working")
	waitLine(t, out, "working")
	c.update(func() {
		c.afterRead = func() {
			c.setPhase("a-node-0-0-aaaaa", corev1.PodSucceeded)
			c.finish(trainer.TrainJobComplete)
		}
	})
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(EndGrace + time.Second): // sooner than any periodic re-read
		t.Fatal("the follower missed the change that came between its read and its wait")
	}
}

// TestFollowOutlastsThePod: the pod finishing does not end -f; the job's end does (a Job may
// start the step again, and the exit code is the job's).
func TestFollowOutlastsThePod(t *testing.T) {
	c := newFakeCluster()
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodRunning)
	c.write("a-node-0-0-aaaaa", "done")
	out := &lockedBuffer{got: make(chan string, 100)}
	done := runFollower(t, c, out, LogOptions{Follow: true})
	waitLine(t, out, "done")
	c.setPhase("a-node-0-0-aaaaa", corev1.PodSucceeded)
	select {
	case err := <-done:
		t.Fatalf("the follower ended (%v) before the job", err)
	case <-time.After(EndGrace + 500*time.Millisecond):
	}
	c.finish(trainer.TrainJobComplete)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the follower did not end with the job")
	}
}

// TestSameTimestamps: lines written at once share a timestamp (kwok's files, a burst); every
// one is printed.
func TestSameTimestamps(t *testing.T) {
	c := newFakeCluster()
	c.addPod("a-node-0-0-aaaaa", "node", "0", 1, corev1.PodSucceeded)
	c.update(func() {
		ts := c.clock.Format(time.RFC3339Nano)
		c.logs["a-node-0-0-aaaaa"] = []string{ts + " one", ts + " two", ts + " three"}
	})
	out := &lockedBuffer{}
	if _, err := (&Follower{Source: c, Out: out, Opts: LogOptions{}}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"one", "two", "three"}, out.all()); diff != "" {
		t.Errorf("output (-want +got):\n%s", diff)
	}
}
