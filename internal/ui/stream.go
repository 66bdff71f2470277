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
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/multicluster"
)

// heartbeat keeps idle streams open through proxies that close quiet connections.
const heartbeat = 25 * time.Second

// sse writes server-sent events.
type sse struct {
	w http.ResponseWriter
	f http.Flusher
}

func newSSE(w http.ResponseWriter) (*sse, error) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, errors.New("streaming is not supported by this connection")
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	holdOpen(w)
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &sse{w: w, f: f}, nil
}

// send writes one event; every line of data gets its own "data:" field, as the format asks.
func (e *sse) send(event, data string) error {
	var b strings.Builder
	if event != "" {
		b.WriteString("event: " + event + "\n")
	}
	for line := range strings.SplitSeq(data, "\n") {
		b.WriteString("data: " + line + "\n")
	}
	b.WriteString("\n")
	holdOpen(e.w)
	if _, err := io.WriteString(e.w, b.String()); err != nil {
		return err
	}
	e.f.Flush()
	return nil
}

func (e *sse) comment() error {
	holdOpen(e.w)
	if _, err := io.WriteString(e.w, ": keep-alive\n\n"); err != nil {
		return err
	}
	e.f.Flush()
	return nil
}

// stream sends render's events at once and again after each change sub lets through, until
// the page goes away.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, sub *Subscription, render func(context.Context, *sse) error) {
	ev, err := newSSE(w)
	if err != nil {
		s.fail(w, err)
		return
	}
	ctx := r.Context()
	tick := time.NewTicker(heartbeat)
	defer tick.Stop()
	for {
		if err := render(ctx, ev); err != nil {
			_ = ev.send("failure", err.Error())
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-sub.C:
		case <-tick.C:
			if ev.comment() != nil {
				return
			}
			continue
		}
	}
}

// LogOpener reads what the store does not keep: pod logs and events.
type LogOpener interface {
	Logs(ctx context.Context, ns, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error)
	Events(ctx context.Context, ns string) ([]corev1.Event, error)
}

// ClientsetOpener reads logs and events with one identity.
type ClientsetOpener struct{ Clientset jobview.CoreClient }

// Logs opens a container's log.
func (c ClientsetOpener) Logs(ctx context.Context, ns, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	o := opts.DeepCopy()
	o.Container = container
	return c.Clientset.CoreV1().Pods(ns).GetLogs(pod, o).Stream(ctx)
}

// Events lists a namespace's events.
func (c ClientsetOpener) Events(ctx context.Context, ns string) ([]corev1.Event, error) {
	list, err := c.Clientset.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, err
	}
	return list.Items, nil
}

func (s *Server) events(ctx context.Context, opener LogOpener, ns, name string, jobs []trainer.JobStatus) ([]jobview.Event, error) {
	all, err := opener.Events(ctx, ns)
	if err != nil {
		return nil, err
	}
	rjobs := map[string]bool{}
	for _, js := range jobs {
		rjobs[js.Name] = true
	}
	return jobview.Events(name, rjobs, all), nil
}

// storeSource is the log follower's view of one job through the store: no extra watches per
// open log, only pods/log.
type storeSource struct {
	s       *Server
	opener  LogOpener
	ns, job string
	// worker, for a job MultiKueue dispatched, is the cluster its pods are on (and opener the
	// worker's); the TrainJob, with the status Kueue copies back, is the store's.
	worker *jobview.Reader
	// changed fans the job's subscription out: a follower has several waiters at once (the
	// step, and the stream it ends), and each must wake.
	changed jobview.Signal
}

// forward wakes the waiters on each change of the subscription until ctx ends.
func (src *storeSource) forward(ctx context.Context, sub *Subscription) {
	for {
		select {
		case <-sub.C:
			src.changed.Notify()
		case <-ctx.Done():
			return
		}
	}
}

func (src *storeSource) Snapshot(ctx context.Context) (*trainer.TrainJob, []corev1.Pod, error) {
	tj, err := src.s.Store.TrainJob(ctx, src.ns, src.job)
	if err != nil {
		return nil, nil, err
	}
	if src.worker != nil {
		pods, err := src.worker.Pods(ctx, tj)
		return tj, pods, err
	}
	pods, err := src.s.Store.Pods(ctx, src.ns, src.job)
	return tj, pods, err
}

func (src *storeSource) Changes(context.Context) <-chan struct{} { return src.changed.Wait() }

func (src *storeSource) Logs(ctx context.Context, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return src.opener.Logs(ctx, src.ns, pod, container, opts)
}

// logs streams one step's log as events ("line" per line), or, with download=1, sends the
// whole log as a file.
func (s *Server) logs(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	q := r.URL.Query()
	step := q.Get("step")
	if step == "" {
		step = "node-0"
	}
	if err := s.allow(r, "get", ns); err != nil {
		s.fail(w, err)
		return
	}
	opener, err := s.opener(r)
	if err != nil {
		s.fail(w, err)
		return
	}
	sub := s.Store.Changes.Subscribe(func(c Change) bool { return c.Namespace == ns && c.Name == name })
	defer sub.Close()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	src := &storeSource{s: s, opener: opener, ns: ns, job: name}
	// A job MultiKueue runs elsewhere: its log is the worker's, if this user may reach it.
	var unreachable error
	if tj, err := s.Store.TrainJob(ctx, ns, name); err == nil {
		if rem := s.remote(ctx, r, tj); rem != nil {
			switch {
			case rem.Reachable():
				src.worker, src.opener = rem.Reader, ClientsetOpener{Clientset: rem.Core}
			case rem.Placement.Dispatched():
				unreachable = fmt.Errorf("TrainJob %s runs on worker %s (%s); its logs cannot be read there: %s",
					name, rem.Placement.Worker, multicluster.ReasonMultiKueue, rem.Placement.PodsHidden)
			default:
				unreachable = fmt.Errorf("TrainJob %s is not on a worker yet: %s", name, rem.Placement.Waiting)
			}
		}
	}
	go src.forward(ctx, sub)
	if q.Get("download") == "1" {
		holdOpen(w)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name+"-"+step+".log"))
		if unreachable != nil {
			_, _ = fmt.Fprintf(w, "[gantry ui: %v]\n", unreachable)
			return
		}
		f := &jobview.Follower{Source: src, Out: deadlineWriter{w}, Opts: jobview.LogOptions{Step: step}}
		if _, err := f.Run(r.Context()); err != nil {
			_, _ = fmt.Fprintf(w, "\n[gantry ui: %v]\n", err)
		}
		return
	}
	ev, err := newSSE(w)
	if err != nil {
		s.fail(w, err)
		return
	}
	if unreachable != nil {
		_ = ev.send("failure", unreachable.Error())
		return
	}
	tail := int64(1000)
	f := &jobview.Follower{Source: src, Out: &lineWriter{ev: ev}, Opts: jobview.LogOptions{
		Step: step, Follow: q.Get("follow") != "0", Tail: &tail,
	}}
	if _, err := f.Run(r.Context()); err != nil && r.Context().Err() == nil {
		_ = ev.send("failure", err.Error())
		return
	}
	_ = ev.send("end", "")
}

// deadlineWriter gives each write of a download streamWriteTimeout: a long log takes longer
// than the server's write timeout, a client that stops reading is dropped.
type deadlineWriter struct{ w http.ResponseWriter }

func (d deadlineWriter) Write(p []byte) (int, error) {
	holdOpen(d.w)
	return d.w.Write(p)
}

// lineWriter turns the follower's lines into "line" events.
type lineWriter struct{ ev *sse }

func (l *lineWriter) Write(p []byte) (int, error) {
	for line := range strings.SplitSeq(strings.TrimSuffix(string(p), "\n"), "\n") {
		if err := l.ev.send("line", line); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}
