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
	"io"
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// CoreClient reads pods/log: a *kubernetes.Clientset, or NewCoreClient's, which does not pull
// every API group's client into the binary.
type CoreClient interface {
	CoreV1() corev1client.CoreV1Interface
}

type coreClient struct{ core corev1client.CoreV1Interface }

func (c coreClient) CoreV1() corev1client.CoreV1Interface { return c.core }

// NewCoreClient returns a CoreClient for cfg.
func NewCoreClient(cfg *rest.Config) (CoreClient, error) {
	core, err := corev1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return coreClient{core}, nil
}

// APISource is the LogSource of a TrainJob on a cluster: pods and the job are watched, logs
// come from pods/log.
type APISource struct {
	Reader *Reader
	// Pods, when set, is the cluster the pods are on and Clientset's: a MultiKueue worker, while
	// the TrainJob (with the status Kueue copies back) is read from Reader's manager cluster.
	Pods      *Reader
	Clientset CoreClient
	Namespace string
	Name      string
	// Context bounds the watches; the first Changes call's when nil. Give the command's: a
	// caller's wait with a deadline must not end the watches of every step.
	Context context.Context

	mu      sync.Mutex
	watches []watch.Interface
	gen     int // counts the pairs of watches opened, so a late forward stops only its own
	changed Signal
	closed  bool // after Close, no watch is opened again
}

// Snapshot reads the TrainJob and its pods.
func (s *APISource) Snapshot(ctx context.Context) (*trainer.TrainJob, []corev1.Pod, error) {
	tj, err := s.Reader.TrainJob(ctx, s.Namespace, s.Name)
	if err != nil {
		return nil, nil, err
	}
	pods, err := s.pods().Pods(ctx, tj)
	return tj, pods, err
}

func (s *APISource) pods() *Reader {
	if s.Pods != nil {
		return s.Pods
	}
	return s.Reader
}

// Changes returns a channel that the next watch event about the job or its pods closes, or
// the end of a watch (so the waiter asks again, which opens the watches again).
func (s *APISource) Changes(ctx context.Context) <-chan struct{} {
	changed := s.changed.Wait()
	s.ensureWatches(ctx)
	return changed
}

// ensureWatches opens the two watches once, and again after the apiserver closed them.
func (s *APISource) ensureWatches(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.watches) > 0 || s.closed {
		return
	}
	if s.Context != nil {
		ctx = s.Context
	}
	pods, err := s.pods().Client.Watch(ctx, &corev1.PodList{}, client.InNamespace(s.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: s.Name})
	if err != nil {
		return
	}
	jobs, err := s.Reader.Client.Watch(ctx, &trainer.TrainJobList{}, client.InNamespace(s.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", s.Name)})
	if err != nil {
		pods.Stop()
		return
	}
	s.watches = []watch.Interface{pods, jobs}
	s.gen++
	for _, w := range s.watches {
		go s.forward(w, s.gen)
	}
}

// forward wakes the waiters on every event; when the watch ends, both are dropped and the
// waiters woken, so their next Changes opens them again.
func (s *APISource) forward(w watch.Interface, gen int) {
	for range w.ResultChan() {
		s.changed.Notify()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if gen != s.gen {
		return
	}
	for _, other := range s.watches {
		other.Stop()
	}
	s.watches = nil
	s.changed.Notify()
}

// Close stops the watches.
func (s *APISource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.gen++ // the stopped watches' ends wake no one
	for _, w := range s.watches {
		w.Stop()
	}
	s.watches = nil
}

// Logs opens a container's log through the apiserver.
func (s *APISource) Logs(ctx context.Context, pod, container string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	o := opts.DeepCopy()
	o.Container = container
	return s.Clientset.CoreV1().Pods(s.Namespace).GetLogs(pod, o).Stream(ctx)
}
