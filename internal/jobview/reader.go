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
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	gscheme "github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Reader fetches job views from the API. Its client maps kinds statically, so it never asks
// the discovery API: `gantry list -A` costs one request for the TrainJobs and one per other
// kind it needs.
type Reader struct {
	Client client.WithWatch
	// KueueNamespace is Kueue's, where MultiKueue's kubeconfig Secrets are; empty is
	// multicluster.DefaultKueueNamespace.
	KueueNamespace string
	// Connect makes a MultiKueue worker's clients; nil is the package's Connect.
	Connect Connector
}

// NewReader returns a reader for the cluster cfg points at.
func NewReader(cfg *rest.Config) (*Reader, error) {
	s, err := gscheme.New()
	if err != nil {
		return nil, err
	}
	c, err := client.NewWithWatch(cfg, client.Options{Scheme: s, Mapper: StaticMapper()})
	if err != nil {
		return nil, err
	}
	return &Reader{Client: c}, nil
}

// StaticMapper maps every kind the job view reads, so no discovery request is made.
func StaticMapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	for _, k := range []struct {
		gvk   schema.GroupVersionKind
		scope meta.RESTScope
	}{
		{trainer.GroupVersion.WithKind(trainer.TrainJobKind), meta.RESTScopeNamespace},
		{trainer.GroupVersion.WithKind(trainer.OptimizationJobKind), meta.RESTScopeNamespace},
		{trainer.GroupVersion.WithKind(trainer.TrainingRuntimeKind), meta.RESTScopeNamespace},
		{trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind), meta.RESTScopeRoot},
		{jobset.SchemeGroupVersion.WithKind("JobSet"), meta.RESTScopeNamespace},
		{batchv1.SchemeGroupVersion.WithKind("Job"), meta.RESTScopeNamespace},
		{corev1.SchemeGroupVersion.WithKind("Pod"), meta.RESTScopeNamespace},
		{corev1.SchemeGroupVersion.WithKind("Event"), meta.RESTScopeNamespace},
		{corev1.SchemeGroupVersion.WithKind("ConfigMap"), meta.RESTScopeNamespace},
		{corev1.SchemeGroupVersion.WithKind("Namespace"), meta.RESTScopeRoot},
		{corev1.SchemeGroupVersion.WithKind("Secret"), meta.RESTScopeNamespace},
		{trainjob.WorkloadGVK, meta.RESTScopeNamespace},
		{multicluster.ClusterGVK, meta.RESTScopeRoot},
	} {
		m.Add(k.gvk, k.scope)
		// A cache limited to some namespaces asks the scope of the list kind itself
		// (apiutil.IsObjectNamespaced on a TrainJobList); only its scope is ever read.
		m.Add(k.gvk.GroupVersion().WithKind(k.gvk.Kind+"List"), k.scope)
	}
	return m
}

// TrainJob reads one TrainJob.
func (r *Reader) TrainJob(ctx context.Context, ns, name string) (*trainer.TrainJob, error) {
	tj := &trainer.TrainJob{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tj); err != nil {
		return nil, err
	}
	return tj, nil
}

// Get builds the whole view of one TrainJob: its runtime (snapshot first), pods, events and
// Kueue Workload. Only the TrainJob itself must be readable; the rest is left out when it is
// not (a user may not see pods or events), so a view is always printed.
func (r *Reader) Get(ctx context.Context, ns, name string) (*View, error) {
	tj, err := r.TrainJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	return r.Complete(ctx, tj)
}

// Complete builds the view of a TrainJob already read. For a job Kueue's MultiKueue dispatched
// to a worker, the steps, Jobs and events are the worker's, read through its kubeconfig when
// this identity may read it; View.MultiKueue says where it runs or why they are not shown.
func (r *Reader) Complete(ctx context.Context, tj *trainer.TrainJob) (*View, error) {
	rt := r.runtimeOf(ctx, tj)
	wl, placement := r.workloadOf(ctx, tj)
	var rem *Remote
	if placement != nil {
		rem = r.Reach(ctx, placement)
	}
	// where holds the pods: this cluster, or the worker's; nil when the worker's are hidden.
	where := r
	if rem != nil {
		where = rem.Reader
	}
	var pods []corev1.Pod
	var ch *trainjob.Children
	rjobs := map[string]bool{}
	for _, js := range tj.Status.JobsStatus {
		rjobs[js.Name] = true
	}
	var all []corev1.Event
	if where != nil {
		var err error
		if pods, err = where.Pods(ctx, tj); err != nil && where != r {
			placement.PodsHidden = fmt.Sprintf("cannot list pods on worker %s: %s", placement.Worker, multicluster.Short(err))
			where = nil
		}
	}
	if where != nil {
		ch = where.children(ctx, tj, pods)
	}
	list := &corev1.EventList{}
	if err := r.Client.List(ctx, list, client.InNamespace(tj.Namespace)); err == nil {
		all = list.Items
	}
	if where != nil && where != r {
		remote := &corev1.EventList{}
		if err := where.Client.List(ctx, remote, client.InNamespace(tj.Namespace)); err == nil {
			all = append(all, remote.Items...)
		}
	}
	events := Events(tj.Name, rjobs, all)
	s := SummarizeWith(tj, rt, wl, ch)
	s.MultiKueue = placement
	return NewView(s, rt, tj, Steps(pods), events), nil
}

// children reads the JobSet's Jobs of a job that may be retrying pods; pods nil reads them
// too. Nil when the job is settled or the Jobs are unreadable (the state then falls back to
// status.jobsStatus).
func (r *Reader) children(ctx context.Context, tj *trainer.TrainJob, pods []corev1.Pod) *trainjob.Children {
	if !trainjob.MayRetry(tj) {
		return nil
	}
	jobs := &batchv1.JobList{}
	if err := r.Client.List(ctx, jobs, client.InNamespace(tj.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: tj.Name}); err != nil {
		return nil
	}
	if pods == nil {
		pods, _ = r.Pods(ctx, tj)
	}
	return &trainjob.Children{Jobs: jobs.Items, Pods: pods, Now: time.Now()}
}

// childrenFor reads, for a list, the Jobs of every job that may be retrying with one request,
// and the failed pods with a second, only when some Job has failures. Keyed by JobSet name.
func (r *Reader) childrenFor(ctx context.Context, ns string, tjs []trainer.TrainJob) map[string]*trainjob.Children {
	if !slices.ContainsFunc(tjs, func(tj trainer.TrainJob) bool { return trainjob.MayRetry(&tj) }) {
		return nil
	}
	jobs := &batchv1.JobList{}
	if err := r.Client.List(ctx, jobs, client.InNamespace(ns), client.HasLabels{jobset.JobSetNameKey}); err != nil {
		return nil
	}
	out := map[string]*trainjob.Children{}
	now := time.Now()
	failures := false
	for _, j := range jobs.Items {
		key := j.Namespace + "/" + j.Labels[jobset.JobSetNameKey]
		if out[key] == nil {
			out[key] = &trainjob.Children{Now: now}
		}
		out[key].Jobs = append(out[key].Jobs, j)
		failures = failures || j.Status.Failed > 0
	}
	if !failures {
		return out
	}
	pods := &corev1.PodList{}
	if err := r.Client.List(ctx, pods, client.InNamespace(ns), client.HasLabels{jobset.JobSetNameKey},
		client.MatchingFields{"status.phase": string(corev1.PodFailed)}); err == nil {
		for _, p := range pods.Items {
			if c := out[p.Namespace+"/"+p.Labels[jobset.JobSetNameKey]]; c != nil {
				c.Pods = append(c.Pods, p)
			}
		}
	}
	return out
}

// Pods lists the pods of a TrainJob's JobSet.
func (r *Reader) Pods(ctx context.Context, tj *trainer.TrainJob) ([]corev1.Pod, error) {
	list := &corev1.PodList{}
	err := r.Client.List(ctx, list, client.InNamespace(tj.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: tj.Name})
	return list.Items, err
}

func (r *Reader) runtimeOf(ctx context.Context, tj *trainer.TrainJob) *Runtime {
	obj, _, err := ref.ResolveRuntime(ctx, r.Client, tj, ref.SnapshotThenLive)
	if err != nil {
		// The snapshot may be unreadable to this user while the runtime is not.
		if obj, _, err = ref.ResolveRuntime(ctx, r.Client, tj, ref.LiveOnly); err != nil {
			return nil
		}
	}
	return summarizeObject(obj)
}

func summarizeObject(obj client.Object) *Runtime {
	switch rt := obj.(type) {
	case *trainer.TrainingRuntime:
		s := SummarizeRuntime(rt, trainer.TrainingRuntimeKind, &rt.Spec)
		return &s
	case *trainer.ClusterTrainingRuntime:
		s := SummarizeRuntime(rt, trainer.ClusterTrainingRuntimeKind, &rt.Spec)
		return &s
	}
	return nil
}

// workloadOf reads tj's Kueue Workload when the state needs it (a suspended job) or the job is
// MultiKueue's (its placement: nil for other jobs).
func (r *Reader) workloadOf(ctx context.Context, tj *trainer.TrainJob) (*trainjob.Workload, *multicluster.Placement) {
	dispatched := trainjob.DispatchedByMultiKueue(tj)
	if !trainjob.Suspended(tj) && !dispatched {
		return nil, nil
	}
	u, err := r.resolver().Workload(ctx, tj)
	var wl *trainjob.Workload
	if u != nil && trainjob.Suspended(tj) {
		wl = trainjob.WorkloadFrom(u)
	}
	return wl, placementFrom(tj, u, err)
}

// ListOptions select the TrainJobs of a list.
type ListOptions struct {
	// Namespace is empty for every namespace.
	Namespace string
	Selector  string
	Runtime   string
	States    []trainjob.State
}

// SummaryList is the outcome of a list; ResourceVersion lets a watch go on from it.
type SummaryList struct {
	Items           []Summary
	ResourceVersion string
}

// Matches applies the filters a label selector cannot express.
func (o ListOptions) Matches(s *Summary) bool {
	if o.Runtime != "" && s.Runtime.Name != o.Runtime {
		return false
	}
	return len(o.States) == 0 || slices.Contains(o.States, s.State)
}

// Summarize reads what one TrainJob's summary needs besides the job: its runtime and Workload.
func (r *Reader) Summarize(ctx context.Context, tj *trainer.TrainJob) Summary {
	wl, placement := r.workloadOf(ctx, tj)
	var ch *trainjob.Children
	if placement == nil {
		ch = r.children(ctx, tj, nil)
	}
	s := SummarizeWith(tj, r.runtimeOf(ctx, tj), wl, ch)
	s.MultiKueue = placement
	return s
}

// List summarizes TrainJobs. Runtimes and Workloads are read with one list each, and only
// when a job needs them: three requests at most, however many jobs there are.
func (r *Reader) List(ctx context.Context, opts ListOptions) (*SummaryList, error) {
	lo := []client.ListOption{client.InNamespace(opts.Namespace)}
	if opts.Selector != "" {
		sel, err := parseSelector(opts.Selector)
		if err != nil {
			return nil, err
		}
		lo = append(lo, client.MatchingLabelsSelector{Selector: sel})
	}
	list := &trainer.TrainJobList{}
	if err := r.Client.List(ctx, list, lo...); err != nil {
		return nil, err
	}
	runtimes := r.runtimesFor(ctx, opts.Namespace, list.Items)
	workloads, raw, wlErr := r.workloadsFor(ctx, opts.Namespace, list.Items)
	children := r.childrenFor(ctx, opts.Namespace, list.Items)
	out := &SummaryList{Items: make([]Summary, 0, len(list.Items)), ResourceVersion: list.ResourceVersion}
	for i := range list.Items {
		tj := &list.Items[i]
		s := SummarizeWith(tj, runtimes[RuntimeKey(tj)], workloads[string(tj.UID)], children[tj.Namespace+"/"+tj.Name])
		s.MultiKueue = placementFrom(tj, raw[string(tj.UID)], wlErr)
		if opts.Matches(&s) {
			out.Items = append(out.Items, s)
		}
	}
	return out, nil
}

// RuntimeKey is the key of the runtime a TrainJob references in an index of runtimes built
// with Runtime.Key: a TrainingRuntime of the job's namespace, or a ClusterTrainingRuntime.
func RuntimeKey(tj *trainer.TrainJob) string {
	key := trainjob.RuntimeKey(tj)
	return trainjob.RuntimeKind(tj) + "/" + key.Namespace + "/" + key.Name
}

// runtimesFor reads the runtimes whose defaults some job needs (no numNodes or resources of its
// own). A failure leaves those columns unknown rather than failing the list.
func (r *Reader) runtimesFor(ctx context.Context, ns string, jobs []trainer.TrainJob) map[string]*Runtime {
	needCluster, needNS := false, false
	for i := range jobs {
		t := jobs[i].Spec.Trainer
		if t != nil && t.NumNodes != nil && t.ResourcesPerNode != nil {
			continue
		}
		if trainjob.RuntimeKind(&jobs[i]) == trainer.TrainingRuntimeKind {
			needNS = true
		} else {
			needCluster = true
		}
	}
	out := map[string]*Runtime{}
	if needCluster {
		if rts, err := r.ListRuntimes(ctx, "", true, false); err == nil {
			addRuntimes(out, rts)
		}
	}
	if needNS {
		if rts, err := r.ListRuntimes(ctx, ns, false, true); err == nil {
			addRuntimes(out, rts)
		}
	}
	return out
}

func addRuntimes(m map[string]*Runtime, rts []Runtime) {
	for i := range rts {
		rt := &rts[i]
		m[rt.Key()] = rt
	}
}

// workloadsFor reads Kueue's Workloads when a job is suspended (only then does the state need
// them, and a Workload says Kueue holds the job whatever its labels) or MultiKueue's (they name
// the worker). Keyed by the job's UID: the summaries, and the objects for the placements.
func (r *Reader) workloadsFor(ctx context.Context, ns string, jobs []trainer.TrainJob) (map[string]*trainjob.Workload, map[string]*unstructured.Unstructured, error) {
	need := false
	for i := range jobs {
		if trainjob.Suspended(&jobs[i]) || trainjob.DispatchedByMultiKueue(&jobs[i]) {
			need = true
			break
		}
	}
	out := map[string]*trainjob.Workload{}
	raw := map[string]*unstructured.Unstructured{}
	if !need {
		return out, raw, nil
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(trainjob.WorkloadListGVK)
	if err := r.Client.List(ctx, list, client.InNamespace(ns), client.HasLabels{trainjob.WorkloadJobUIDLabel}); err != nil {
		return out, raw, err
	}
	byUID := map[string][]unstructured.Unstructured{}
	for i := range list.Items {
		uid := list.Items[i].GetLabels()[trainjob.WorkloadJobUIDLabel]
		byUID[uid] = append(byUID[uid], list.Items[i])
	}
	for uid, items := range byUID {
		u := multicluster.Newest(items)
		out[uid], raw[uid] = trainjob.WorkloadFrom(u), u
	}
	return out, raw, nil
}

// ListRuntimes summarizes runtimes: ClusterTrainingRuntimes when cluster is set, the
// TrainingRuntimes of ns (every namespace when empty) when namespaced is.
func (r *Reader) ListRuntimes(ctx context.Context, ns string, cluster, namespaced bool) ([]Runtime, error) {
	var out []Runtime
	if namespaced {
		list := &trainer.TrainingRuntimeList{}
		if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, fmt.Errorf("listing TrainingRuntimes: %w", err)
		}
		for i := range list.Items {
			out = append(out, *summarizeObject(&list.Items[i]))
		}
	}
	if cluster {
		list := &trainer.ClusterTrainingRuntimeList{}
		if err := r.Client.List(ctx, list); err != nil {
			return nil, fmt.Errorf("listing ClusterTrainingRuntimes: %w", err)
		}
		for i := range list.Items {
			out = append(out, *summarizeObject(&list.Items[i]))
		}
	}
	return out, nil
}

// GetRuntime reads one runtime with the SDK's precedence: the TrainingRuntime of ns first,
// then the ClusterTrainingRuntime of that name. The object is returned too, for -o yaml.
func (r *Reader) GetRuntime(ctx context.Context, ns, name string) (*Runtime, client.Object, error) {
	tr := &trainer.TrainingRuntime{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tr)
	if err == nil {
		return summarizeObject(tr), tr, nil
	}
	if !isNotFoundOrForbidden(err) {
		return nil, nil, err
	}
	ctr := &trainer.ClusterTrainingRuntime{}
	if err := r.Client.Get(ctx, client.ObjectKey{Name: name}, ctr); err != nil {
		return nil, nil, err
	}
	return summarizeObject(ctr), ctr, nil
}
