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
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// resync bounds how long Changed waits without a watch event: a watch the apiserver closed is
// opened again, and nothing is missed for longer than this.
const resync = 2 * time.Second

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
	Reader    *Reader
	Clientset CoreClient
	Namespace string
	Name      string
	// Context bounds the watches; the first Changed call's when nil. Give the command's: a
	// caller's wait with a deadline must not end the watches of every step.
	Context context.Context

	mu      sync.Mutex
	watches []watch.Interface
	gen     int // counts the pairs of watches opened, so a late forward stops only its own
	// changed is closed on every watch event and replaced: every waiter wakes, one per step.
	changed chan struct{}
}

// Snapshot reads the TrainJob and its pods.
func (s *APISource) Snapshot(ctx context.Context) (*trainer.TrainJob, []corev1.Pod, error) {
	tj, err := s.Reader.TrainJob(ctx, s.Namespace, s.Name)
	if err != nil {
		return nil, nil, err
	}
	pods, err := s.Reader.Pods(ctx, tj)
	return tj, pods, err
}

// Changed returns on the next watch event about the job or its pods, or after resync.
func (s *APISource) Changed(ctx context.Context) error {
	changed := s.ensureWatches(ctx)
	t := time.NewTimer(resync)
	defer t.Stop()
	select {
	case <-changed:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// ensureWatches opens the two watches once and again after the apiserver closed them, and
// returns the channel the next event closes.
func (s *APISource) ensureWatches(ctx context.Context) <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.changed == nil {
		s.changed = make(chan struct{})
	}
	if len(s.watches) > 0 {
		return s.changed
	}
	if s.Context != nil {
		ctx = s.Context
	}
	pods, err := s.Reader.Client.Watch(ctx, &corev1.PodList{}, client.InNamespace(s.Namespace),
		client.MatchingLabels{jobset.JobSetNameKey: s.Name})
	if err != nil {
		return s.changed
	}
	jobs, err := s.Reader.Client.Watch(ctx, &trainer.TrainJobList{}, client.InNamespace(s.Namespace),
		client.MatchingFieldsSelector{Selector: fields.OneTermEqualSelector("metadata.name", s.Name)})
	if err != nil {
		pods.Stop()
		return s.changed
	}
	s.watches = []watch.Interface{pods, jobs}
	s.gen++
	for _, w := range s.watches {
		go s.forward(w, s.gen)
	}
	return s.changed
}

// forward wakes the waiters on every event; a closed watch is dropped so the next Changed
// opens both again.
func (s *APISource) forward(w watch.Interface, gen int) {
	for range w.ResultChan() {
		s.mu.Lock()
		close(s.changed)
		s.changed = make(chan struct{})
		s.mu.Unlock()
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
}

// Close stops the watches.
func (s *APISource) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
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
