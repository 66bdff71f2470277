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

// Package ui is `gantry ui`: a web UI over the job views of internal/jobview (the command line's),
// fed by shared informers, with live updates over server-sent events.
package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	gscheme "github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Store is the UI's copy of the cluster: informers on TrainJobs, their pods, the runtimes and,
// when Kueue is installed, its Workloads. Every page reads it; every change wakes the live
// streams and samples the progress history.
type Store struct {
	cache   cache.Cache
	direct  client.Client
	cfg     *rest.Config // the UI's own identity, which the informers read with
	History *History
	Changes *Broker

	persist *persister
	warn    func(error)

	mu        sync.RWMutex
	workloads bool // whether the Workload informer runs (Kueue installed and readable)
	// optimizations: whether the OptimizationJob informer runs (optimization.go); else
	// optimizationsOff says why not.
	optimizations    bool
	optimizationsOff string
}

// StoreOptions scope what the store watches.
type StoreOptions struct {
	// Namespaces limits the namespaced informers; empty watches every namespace.
	Namespaces []string
	// History bounds the progress history; zero fields take their defaults.
	History HistoryLimits
	// PersistHistory keeps each job's series in a ConfigMap it owns (--history=configmap), so
	// curves survive a restart of the UI and go with the job.
	PersistHistory bool
	// FlushInterval spaces a job's history writes (default 5 s).
	FlushInterval time.Duration
	// Warn is told what an optional part (Kueue's Workloads, the saved history) cannot do; the
	// UI goes on without it.
	Warn func(error)
}

// NewStore builds the informers; Start runs them.
func NewStore(cfg *rest.Config, opts StoreOptions) (*Store, error) {
	s, err := gscheme.New()
	if err != nil {
		return nil, err
	}
	req, err := labels.NewRequirement(jobset.JobSetNameKey, selection.Exists, nil)
	if err != nil {
		return nil, err
	}
	co := cache.Options{
		Scheme: s, Mapper: jobview.StaticMapper(),
		// Only the pods of JobSets: the UI's memory must not grow with the cluster's other pods.
		ByObject:          map[client.Object]cache.ByObject{&corev1.Pod{}: {Label: labels.NewSelector().Add(*req)}},
		DefaultTransform:  cache.TransformStripManagedFields(),
		DefaultNamespaces: map[string]cache.Config{},
	}
	for _, ns := range opts.Namespaces {
		co.DefaultNamespaces[ns] = cache.Config{}
	}
	if len(co.DefaultNamespaces) == 0 {
		co.DefaultNamespaces = nil
	}
	c, err := cache.New(cfg, co)
	if err != nil {
		return nil, err
	}
	direct, err := client.New(cfg, client.Options{Scheme: s, Mapper: co.Mapper})
	if err != nil {
		return nil, err
	}
	st := &Store{cache: c, direct: direct, cfg: cfg, History: NewBoundedHistory(opts.History), Changes: NewBroker(), warn: opts.Warn}
	if st.warn == nil {
		st.warn = func(error) {}
	}
	if opts.PersistHistory {
		st.persist = newPersister(direct, st.History, opts.FlushInterval, opts.Namespaces)
	}
	return st, nil
}

// Start runs the informers and returns once they have synced, or with the reason they cannot.
func (s *Store) Start(ctx context.Context) error {
	for _, obj := range []client.Object{&trainer.TrainJob{}, &corev1.Pod{}, &trainer.ClusterTrainingRuntime{}, &trainer.TrainingRuntime{}} {
		inf, err := s.cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watching %T: %w", obj, err)
		}
		if _, err := inf.AddEventHandler(s.handler(obj)); err != nil {
			return err
		}
	}
	go func() { _ = s.cache.Start(ctx) }()
	if !s.cache.WaitForCacheSync(ctx) {
		return fmt.Errorf("the informers did not sync: can this user list and watch TrainJobs, pods and runtimes?")
	}
	s.startWorkloads(ctx)
	s.startOptimizationJobs(ctx)
	if s.persist != nil {
		for _, err := range s.persist.restore(ctx) {
			s.warn(err)
		}
		go s.persist.run(ctx, s.warn)
	}
	return nil
}

// startWorkloads watches Kueue's Workloads when the cluster has them and this user may list
// them (one probe at start); without them the Queued state comes from the TrainJob alone.
func (s *Store) startWorkloads(ctx context.Context) {
	probe := &unstructured.UnstructuredList{}
	probe.SetGroupVersionKind(trainjob.WorkloadListGVK)
	if err := s.direct.List(ctx, probe, client.Limit(1)); err != nil {
		return
	}
	wl := &unstructured.Unstructured{}
	wl.SetGroupVersionKind(trainjob.WorkloadGVK)
	inf, err := s.cache.GetInformer(ctx, wl)
	if err != nil {
		return
	}
	if _, err := inf.AddEventHandler(s.handler(wl)); err != nil {
		return
	}
	s.mu.Lock()
	s.workloads = true
	s.mu.Unlock()
}

// handler samples progress and tells the live streams what changed: the namespace of the
// object, "" for cluster-scoped runtimes.
func (s *Store) handler(kind client.Object) toolscache.ResourceEventHandler {
	topic := fmt.Sprintf("%T", kind)
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { s.changed(topic, obj, false) },
		UpdateFunc: func(_, obj any) { s.changed(topic, obj, false) },
		DeleteFunc: func(obj any) { s.changed(topic, obj, true) },
	}
}

func (s *Store) changed(topic string, obj any, deleted bool) {
	if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(client.Object)
	if !ok {
		return
	}
	if tj, ok := o.(*trainer.TrainJob); ok {
		if deleted {
			s.History.Forget(tj.UID)
		} else if s.History.Observe(tj) && s.persist != nil {
			s.persist.mark(tj)
		}
	}
	s.Changes.Notify(Change{Namespace: o.GetNamespace(), Name: jobOf(o), Topic: topic})
}

// jobOf is the TrainJob an object belongs to: itself, or the JobSet label of a pod.
func jobOf(o client.Object) string {
	switch v := o.(type) {
	case *trainer.TrainJob:
		return v.Name
	case *corev1.Pod:
		return v.Labels[jobset.JobSetNameKey]
	}
	return ""
}

// JobFilter selects the jobs of the Jobs page; the zero value selects every job.
type JobFilter struct {
	Namespace string
	States    []trainjob.State
	Runtime   string
	Selector  labels.Selector
}

// Jobs summarizes the TrainJobs the filter selects, newest first.
func (s *Store) Jobs(ctx context.Context, f JobFilter) ([]jobview.Summary, error) {
	list := &trainer.TrainJobList{}
	opts := []client.ListOption{client.InNamespace(f.Namespace)}
	if f.Selector != nil {
		opts = append(opts, client.MatchingLabelsSelector{Selector: f.Selector})
	}
	if err := s.cache.List(ctx, list, opts...); err != nil {
		return nil, err
	}
	runtimes, err := s.runtimeIndex(ctx)
	if err != nil {
		return nil, err
	}
	workloads := s.workloadIndex(ctx, f.Namespace)
	lo := jobview.ListOptions{Runtime: f.Runtime, States: f.States}
	var out []jobview.Summary
	for i := range list.Items {
		tj := &list.Items[i]
		sum := jobview.Summarize(tj, runtimes[jobview.RuntimeKey(tj)], workloads[string(tj.UID)])
		if lo.Matches(&sum) {
			out = append(out, sum)
		}
	}
	slices.SortFunc(out, func(a, b jobview.Summary) int {
		if c := b.Created.Compare(a.Created.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return out, nil
}

// runtimeIndex summarizes every runtime, keyed as jobview.RuntimeKey finds them.
func (s *Store) runtimeIndex(ctx context.Context) (map[string]*jobview.Runtime, error) {
	rts, err := s.Runtimes(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]*jobview.Runtime, len(rts))
	for i := range rts {
		out[rts[i].Key()] = &rts[i]
	}
	return out, nil
}

// Runtimes summarizes every runtime the store sees.
func (s *Store) Runtimes(ctx context.Context) ([]jobview.Runtime, error) {
	var out []jobview.Runtime
	ctrs := &trainer.ClusterTrainingRuntimeList{}
	if err := s.cache.List(ctx, ctrs); err != nil {
		return nil, err
	}
	for i := range ctrs.Items {
		out = append(out, jobview.SummarizeRuntime(&ctrs.Items[i], trainer.ClusterTrainingRuntimeKind, &ctrs.Items[i].Spec))
	}
	trs := &trainer.TrainingRuntimeList{}
	if err := s.cache.List(ctx, trs); err != nil {
		return nil, err
	}
	for i := range trs.Items {
		out = append(out, jobview.SummarizeRuntime(&trs.Items[i], trainer.TrainingRuntimeKind, &trs.Items[i].Spec))
	}
	return out, nil
}

func (s *Store) workloadIndex(ctx context.Context, ns string) map[string]*trainjob.Workload {
	out := map[string]*trainjob.Workload{}
	s.mu.RLock()
	enabled := s.workloads
	s.mu.RUnlock()
	if !enabled {
		return out
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(trainjob.WorkloadListGVK)
	if err := s.cache.List(ctx, list, client.InNamespace(ns)); err != nil {
		return out
	}
	for i := range list.Items {
		if uid := list.Items[i].GetLabels()[trainjob.WorkloadJobUIDLabel]; uid != "" {
			out[uid] = trainjob.WorkloadFrom(&list.Items[i])
		}
	}
	return out
}

// TrainJob reads one job from the store.
func (s *Store) TrainJob(ctx context.Context, ns, name string) (*trainer.TrainJob, error) {
	tj := &trainer.TrainJob{}
	return tj, s.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tj)
}

// Pods lists a job's pods from the store.
func (s *Store) Pods(ctx context.Context, ns, name string) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	err := s.cache.List(ctx, list, client.InNamespace(ns), client.MatchingLabels{jobset.JobSetNameKey: name})
	return list.Items, err
}
