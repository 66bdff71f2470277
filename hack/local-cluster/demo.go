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
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/localcluster"
)

const demoNamespace = "gantry-demo"

// demoExamples are the README's examples the demo runs: multi-node torch on GPUs, DeepSpeed over
// MPI (the launcher waits for the nodes), and torchtune with dataset and model initializers.
var demoExamples = []string{"01-torch-multi-node.yaml", "06-deepspeed-mpi.yaml", "05-torchtune-initializers.yaml"}

// demo brings the cluster up, submits the examples into a fresh namespace, prints one line per
// change of a TrainJob or pod until every TrainJob has finished, then a summary.
func demo(ctx context.Context, c *localcluster.Cluster, o *options) error {
	timeout, err := time.ParseDuration(o.demoTimeout)
	if err != nil {
		return fmt.Errorf("--timeout: %w", err)
	}
	// The demo's jobs show live in the web UI too, the link printed at the end, with progress
	// and a loss curve reported for them.
	c.Settings.UI, c.Settings.Progress = true, true
	if err := c.Up(ctx); err != nil {
		return err
	}
	s, err := scheme.New()
	if err != nil {
		return err
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return err
	}
	cl, err := client.New(cfg, client.Options{Scheme: s})
	if err != nil {
		return err
	}
	fmt.Printf("\nrunning %s and the OptimizationJob of hack/local-cluster/demo-optimization.yaml in namespace %s\n",
		strings.Join(demoExamples, ", "), demoNamespace)
	if err := freshNamespace(ctx, cl, demoNamespace); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w := &watcher{start: time.Now(), jobs: map[string]*jobRecord{}, pods: map[string]*podRecord{}}
	events, err := w.watch(ctx, cfg, s)
	if err != nil {
		return err
	}
	names, err := submitExamples(ctx, cl, c.Root)
	if err != nil {
		return err
	}
	for _, n := range names {
		w.expect(n)
	}
	opt, err := submitOptimization(ctx, cl)
	if err != nil {
		return err
	}
	w.opt = &optRecord{name: opt}
	for !w.allFinished() {
		select {
		case ev := <-events:
			w.handle(ev)
		case <-ctx.Done():
			w.summary(os.Stdout)
			return fmt.Errorf("the example jobs did not finish within %s (see 'kubectl -n %s get trainjobs,pods')", timeout, demoNamespace)
		}
	}
	w.summary(os.Stdout)
	showCLI(c, names[0])
	if link, err := c.UILink(); err == nil {
		fmt.Printf("\nWeb UI (the demo's jobs, live; runs until 'make dev-cluster-down'):\n  %s\n", link)
	} else {
		fmt.Printf("\nWeb UI: %v\n", err)
	}
	fmt.Printf("\nThe cluster keeps running; explore it with kubectl and kubectl gantry, stop it with 'make dev-cluster-down':\n"+
		"  export KUBECONFIG=%s PATH=%s:$PATH\n  kubectl -n %s get trainjobs,jobsets,pods -o wide\n"+
		"  kubectl gantry train -n %s -f examples/01-torch-multi-node.yaml --name again --wait; echo \"exit code $?\"\n",
		c.Kubeconfig(), c.BinDir, demoNamespace, demoNamespace)
	if failed := w.failed(); len(failed) > 0 {
		return fmt.Errorf("TrainJobs failed: %s", strings.Join(failed, ", "))
	}
	return nil
}

// showCLI ends the demo with what a practitioner types: the practitioner's command line on the
// jobs that just ran, run in this process as `kubectl gantry` would run them.
func showCLI(c *localcluster.Cluster, job string) {
	for _, args := range [][]string{
		{"list", "-n", demoNamespace, "-o", "wide"},
		{"get", job, "-n", demoNamespace},
		{"logs", job, "-n", demoNamespace, "--tail", "5"},
		{"wait", job, "-n", demoNamespace, "--for", "Complete", "--timeout", "10s"},
	} {
		fmt.Printf("\n$ kubectl gantry %s\n", strings.Join(args, " "))
		o := cli.NewOptions(os.Stdin, os.Stdout, os.Stdout)
		code := cli.Execute(o, cli.NewRootCommand(o), append([]string{"--kubeconfig", c.Kubeconfig()}, args...))
		fmt.Printf("(exit code %d)\n", code)
	}
}

// freshNamespace deletes what an earlier demo left and creates the namespace again.
func freshNamespace(ctx context.Context, cl client.Client, name string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := cl.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	deadline := time.Now().Add(3 * time.Minute)
	for {
		err := cl.Get(ctx, types.NamespacedName{Name: name}, &corev1.Namespace{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("namespace %s from an earlier demo is still terminating", name)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	if err := cl.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		return err
	}
	// The torchtune example reads its Hugging Face token from this Secret.
	return cl.Create(ctx, &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: name, Name: "hf-token"},
		StringData: map[string]string{"token": "hf_demo_not_a_real_token"},
	})
}

func submitExamples(ctx context.Context, cl client.Client, root string) ([]string, error) {
	var names []string
	for _, f := range demoExamples {
		data, err := os.ReadFile(filepath.Join(root, "examples", f))
		if err != nil {
			return nil, err
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(data, &u.Object); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		u.SetNamespace(demoNamespace)
		if err := cl.Create(ctx, u); err != nil {
			return nil, fmt.Errorf("creating %s: %w", f, err)
		}
		names = append(names, u.GetName())
	}
	return names, nil
}

type event struct {
	obj     client.Object
	deleted bool
}

type jobRecord struct {
	state   string
	created time.Time
	ended   time.Time
	runtime string
	// step is the last progress line shown (progressLine); progress and metrics the last report.
	step              int
	progress, metrics string
}

type podRecord struct {
	state, node, job string
}

// watcher turns informer events into progress lines: a line only when an object's state, as
// shown, changes.
type watcher struct {
	start time.Time
	jobs  map[string]*jobRecord
	pods  map[string]*podRecord
	order []string
	// opt is the demo's OptimizationJob; its trials are watched as they appear.
	opt *optRecord
}

// watch starts informers on TrainJobs and pods of the demo namespace; their handlers feed the
// returned channel, which the caller drains in one goroutine.
func (w *watcher) watch(ctx context.Context, cfg *rest.Config, s *runtime.Scheme) (<-chan event, error) {
	informers, err := cache.New(cfg, cache.Options{Scheme: s, DefaultNamespaces: map[string]cache.Config{demoNamespace: {}}})
	if err != nil {
		return nil, err
	}
	events := make(chan event, 1024)
	send := func(obj any, deleted bool) {
		if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		if o, ok := obj.(client.Object); ok {
			select {
			case events <- event{obj: o, deleted: deleted}:
			case <-ctx.Done():
			}
		}
	}
	for _, obj := range []client.Object{&trainer.TrainJob{}, &corev1.Pod{}, &trainer.OptimizationJob{}} {
		inf, err := informers.GetInformer(ctx, obj)
		if err != nil {
			return nil, err
		}
		if _, err := inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { send(o, false) },
			UpdateFunc: func(_, o any) { send(o, false) },
			DeleteFunc: func(o any) { send(o, true) },
		}); err != nil {
			return nil, err
		}
	}
	go func() { _ = informers.Start(ctx) }()
	if !informers.WaitForCacheSync(ctx) {
		return nil, errors.New("watching the demo namespace: caches did not sync")
	}
	return events, nil
}

func (w *watcher) expect(name string) {
	if _, ok := w.jobs[name]; !ok {
		w.jobs[name] = &jobRecord{}
		w.order = append(w.order, name)
	}
}

func (w *watcher) printf(format string, args ...any) {
	fmt.Printf("[%6.1fs] %s\n", time.Since(w.start).Seconds(), fmt.Sprintf(format, args...))
}

func (w *watcher) handle(ev event) {
	switch o := ev.obj.(type) {
	case *trainer.OptimizationJob:
		w.handleOptimization(o, ev.deleted)
	case *trainer.TrainJob:
		if w.opt != nil && o.Labels[optimization.JobNameLabel] == w.opt.name {
			w.expect(o.Name)
		}
		rec, ok := w.jobs[o.Name]
		if !ok {
			return
		}
		if line := progressLine(o, &rec.step); line != "" {
			w.printf("trainjob %-14s %s", o.Name, line)
		}
		rec.progress, rec.metrics = lastReport(o)
		state := jobState(o)
		if ev.deleted {
			state = "deleted"
		}
		rec.created, rec.runtime = o.CreationTimestamp.Time, o.Spec.RuntimeRef.Name
		if state != rec.state {
			rec.state = state
			w.printf("trainjob %-14s %s", o.Name, state)
			if c := finishedCondition(o); c != nil {
				rec.ended = c.LastTransitionTime.Time
			}
		}
	case *corev1.Pod:
		rec := w.pods[o.Name]
		if rec == nil {
			rec = &podRecord{job: o.Labels["jobset.sigs.k8s.io/jobset-name"]}
			w.pods[o.Name] = rec
		}
		if o.Spec.NodeName != "" {
			rec.node = o.Spec.NodeName
		}
		state := podState(o)
		if ev.deleted {
			state = "deleted"
		}
		if state != rec.state {
			rec.state = state
			w.printf("pod      %-40s %s", o.Name, state)
		}
	}
}

func finishedCondition(tj *trainer.TrainJob) *metav1.Condition {
	for _, t := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if c := meta.FindStatusCondition(tj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			return c
		}
	}
	return nil
}

func jobState(tj *trainer.TrainJob) string {
	if c := finishedCondition(tj); c != nil {
		return fmt.Sprintf("%s: %s", c.Type, c.Message)
	}
	if meta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobSuspended) {
		return "Suspended"
	}
	// One word per replicated job, so a line is printed when a job's phase changes, not each count.
	var parts []string
	for _, js := range tj.Status.JobsStatus {
		switch {
		case deref(js.Failed) > 0:
			parts = append(parts, js.Name+" failed")
		case deref(js.Ready) > 0:
			parts = append(parts, js.Name+" ready")
		case deref(js.Active) > 0:
			parts = append(parts, js.Name+" starting")
		case deref(js.Succeeded) > 0:
			parts = append(parts, js.Name+" done")
		}
	}
	if len(parts) == 0 {
		return "Created"
	}
	return "Running: " + strings.Join(parts, ", ")
}

func deref(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}

func podState(p *corev1.Pod) string {
	state := string(p.Status.Phase)
	if state == "" {
		state = string(corev1.PodPending)
	}
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodScheduled && c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable {
			// The scheduler's first sentence says why; the rest is about preemption.
			msg, _, _ := strings.Cut(c.Message, ". ")
			return state + " (unschedulable: " + strings.TrimSuffix(msg, ".") + ")"
		}
	}
	if p.Spec.NodeName != "" {
		state += " on " + p.Spec.NodeName
		if gpus := localcluster.PodGPUs(p); !gpus.IsZero() {
			state += fmt.Sprintf(" (%s GPUs)", gpus.String())
		}
	}
	return state
}

func (w *watcher) allFinished() bool {
	for _, n := range w.order {
		if !strings.HasPrefix(w.jobs[n].state, trainer.TrainJobComplete) && !strings.HasPrefix(w.jobs[n].state, trainer.TrainJobFailed) {
			return false
		}
	}
	return len(w.order) > 0 && w.opt.ended()
}

func (w *watcher) failed() []string {
	var out []string
	for _, n := range w.order {
		if strings.HasPrefix(w.jobs[n].state, trainer.TrainJobFailed) {
			out = append(out, n)
		}
	}
	return out
}

func (w *watcher) summary(out *os.File) {
	_, _ = fmt.Fprintf(out, "\nsummary after %.1fs\n", time.Since(w.start).Seconds())
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "  TRAINJOB\tRUNTIME\tPODS\tDURATION\tPROGRESS\tMETRICS\tSTATE")
	for _, n := range w.order {
		rec := w.jobs[n]
		pods, dur := 0, "-"
		for _, p := range w.pods {
			if p.job == n {
				pods++
			}
		}
		if !rec.ended.IsZero() && !rec.created.IsZero() {
			dur = rec.ended.Sub(rec.created).Round(time.Second).String()
		}
		progress, metrics := cmp.Or(rec.progress, "-"), cmp.Or(rec.metrics, "-")
		_, _ = fmt.Fprintf(tw, "  %s\t%s\t%d\t%s\t%s\t%s\t%s\n", n, rec.runtime, pods, dur, progress, metrics, rec.state)
	}
	_ = tw.Flush()
	if w.opt != nil {
		_, _ = fmt.Fprintf(out, "optimizationjob %s: %s\n", w.opt.name, w.opt.state)
	}
	byNode := map[string][]string{}
	for name, p := range w.pods {
		if p.node != "" {
			byNode[p.node] = append(byNode[p.node], name)
		}
	}
	nodes := make([]string, 0, len(byNode))
	for n := range byNode {
		nodes = append(nodes, n)
	}
	sort.Strings(nodes)
	_, _ = fmt.Fprintln(out, "pods per node:")
	for _, n := range nodes {
		sort.Strings(byNode[n])
		_, _ = fmt.Fprintf(out, "  %-12s %d: %s\n", n, len(byNode[n]), strings.Join(byNode[n], " "))
	}
}
