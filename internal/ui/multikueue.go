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
	"fmt"
	"io"
	"net/http"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// A TrainJob Kueue's MultiKueue dispatched runs on a worker cluster. Where comes from the
// store's copy of its Workload; the worker's MultiKueueCluster and kubeconfig Secret are read
// with the requesting user's identity (their token, or impersonation in header mode; theirs in
// kubeconfig mode), so the API server decides, as for logs and events, whether this user may
// see the worker's pods. The UI's own ServiceAccount needs no access to Kueue's Secrets.

// workloadObject is the store's copy of tj's newest Workload; ok false when the store does not
// watch Workloads (Kueue not installed, or not readable by the UI).
func (s *Store) workloadObject(ctx context.Context, tj *trainer.TrainJob) (wl *unstructured.Unstructured, ok bool) {
	s.mu.RLock()
	enabled := s.workloads
	s.mu.RUnlock()
	if !enabled {
		return nil, false
	}
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(trainjob.WorkloadListGVK)
	if err := s.cache.List(ctx, list, client.InNamespace(tj.Namespace),
		client.MatchingLabels{trainjob.WorkloadJobUIDLabel: string(tj.UID)}); err != nil {
		return nil, false
	}
	return multicluster.Newest(list.Items), true
}

// remote is where tj runs when MultiKueue dispatched it, reached as the request's user; nil for
// other jobs.
func (s *Server) remote(ctx context.Context, r *http.Request, tj *trainer.TrainJob) *jobview.Remote {
	if !trainjob.DispatchedByMultiKueue(tj) {
		return nil
	}
	var p multicluster.Placement
	if wl, ok := s.Store.workloadObject(ctx, tj); ok {
		p = multicluster.PlacementOf(wl)
	} else {
		p = multicluster.Placement{Waiting: "the UI does not watch Kueue's Workloads (Kueue is not installed, or the UI may not list them)"}
	}
	if !p.Dispatched() {
		return &jobview.Remote{Placement: &p}
	}
	cfg := s.Store.cfg
	if u := UserFrom(r.Context()); s.Access != nil && u != nil {
		cfg = UserConfig(s.BaseConfig, u)
	}
	reader, err := jobview.NewReader(cfg)
	if err != nil {
		p.PodsHidden = fmt.Sprintf("cannot read as this user: %v", err)
		return &jobview.Remote{Placement: &p, Err: err}
	}
	reader.KueueNamespace, reader.Connect = s.KueueNamespace, s.Connect
	return reader.Reach(ctx, &p)
}

// multiOpener reads events from the manager and the worker, logs from the worker.
type multiOpener struct{ manager, worker LogOpener }

func (m multiOpener) Logs(ctx context.Context, ns, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	return m.worker.Logs(ctx, ns, pod, container, opts)
}

// Events are the manager's (Kueue's about the job), then the worker's when it lets this user
// read them.
func (m multiOpener) Events(ctx context.Context, ns string) ([]corev1.Event, error) {
	all, err := m.manager.Events(ctx, ns)
	if err != nil {
		return nil, err
	}
	if more, err := m.worker.Events(ctx, ns); err == nil {
		all = append(all, more...)
	}
	return all, nil
}
