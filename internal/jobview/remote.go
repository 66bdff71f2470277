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

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Remote is where a manager cluster's TrainJob runs when Kueue's MultiKueue dispatched it:
// the placement, and the worker's clients when this identity may read its kubeconfig.
type Remote struct {
	Placement *multicluster.Placement
	// Reader and Core read the worker's copy of the job, its pods and their logs; nil when the
	// job is not dispatched yet or the worker cannot be reached (Err, Placement.PodsHidden).
	Reader *Reader
	Core   CoreClient
	// Err is why the worker cannot be reached, for exit codes: an *multicluster.Unreachable,
	// or the worker's own API error.
	Err error
}

// Reachable reports whether the worker's pods can be read.
func (r *Remote) Reachable() bool { return r != nil && r.Reader != nil }

// Connector makes the clients of a worker cluster from its config: NewReader and
// NewCoreClient, unless a test puts fakes in their place.
type Connector func(cfg *rest.Config) (*Reader, CoreClient, error)

// Connect makes real clients for cfg.
func Connect(cfg *rest.Config) (*Reader, CoreClient, error) {
	r, err := NewReader(cfg)
	if err != nil {
		return nil, nil, err
	}
	core, err := NewCoreClient(cfg)
	if err != nil {
		return nil, nil, err
	}
	return r, core, nil
}

func (r *Reader) resolver() *multicluster.Resolver {
	return &multicluster.Resolver{Client: r.Client, KueueNamespace: r.KueueNamespace}
}

// Remote finds where tj runs: nil for a job MultiKueue does not dispatch. It reads the job's
// Workload, then, once it names a worker, the MultiKueueCluster and its kubeconfig Secret with
// this reader's identity.
func (r *Reader) Remote(ctx context.Context, tj *trainer.TrainJob) *Remote {
	if !trainjob.DispatchedByMultiKueue(tj) {
		return nil
	}
	wl, err := r.resolver().Workload(ctx, tj)
	return r.Reach(ctx, placementFrom(tj, wl, err))
}

// placementFrom is the placement of a dispatched job from its Workload, or the reason the
// Workload could not be read; nil for other jobs.
func placementFrom(tj *trainer.TrainJob, wl *unstructured.Unstructured, err error) *multicluster.Placement {
	if !trainjob.DispatchedByMultiKueue(tj) {
		return nil
	}
	if err != nil {
		return &multicluster.Placement{Waiting: "cannot read its Kueue Workload: " + multicluster.Short(err)}
	}
	p := multicluster.PlacementOf(wl)
	return &p
}

// Reach connects to the placement's worker with this reader's identity, setting PodsHidden when
// it cannot: the UI knows the placement from its own copy of the Workloads.
func (r *Reader) Reach(ctx context.Context, p *multicluster.Placement) *Remote {
	rem := &Remote{Placement: p}
	if !p.Dispatched() {
		return rem
	}
	cfg, err := r.resolver().Connect(ctx, p.Worker)
	if err != nil {
		p.PodsHidden, rem.Err = err.Error(), err
		return rem
	}
	connect := r.Connect
	if connect == nil {
		connect = Connect
	}
	if rem.Reader, rem.Core, err = connect(cfg); err != nil {
		p.PodsHidden = fmt.Sprintf("cannot connect to worker %s: %v", p.Worker, err)
		rem.Reader, rem.Core, rem.Err = nil, nil, err
	}
	if rem.Reader != nil {
		rem.Reader.Connect = r.Connect
	}
	return rem
}
