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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/render"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// trainJobName names the i-th TrainJob (and so its JobSet).
func trainJobName(i int) string {
	return fmt.Sprintf("tj-%05d", i)
}

// newTrainJob is what a user of the Python SDK submits: an image, a command, nodes and their
// resources, against the shipped torch runtime.
func newTrainJob(ns, name string, nodes int32) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper(ns, name).
		RuntimeRef(trainer.ClusterTrainingRuntimeKind, runtimeName).
		Trainer(utiltesting.MakeTrainerWrapper().
			Container("pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", []string{"torchrun", "/workspace/train.py"}, nil).
			NumNodes(nodes).
			ResourcesPerNode(corev1.ResourceRequirements{Limits: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourceMemory: resource.MustParse("64Gi"),
				"nvidia.com/gpu": resource.MustParse("8"),
			}}).
			Env(corev1.EnvVar{Name: "EPOCHS", Value: "10"}).Obj()).
		Obj()
}

// renderJobSets renders, with the controller's own code, the JobSets Gantry creates for the n
// TrainJobs of the benchmark, for the baseline to create directly. The TrainJob and runtime are
// defaulted by the CRD schemas first, as the apiserver would.
func renderJobSets(n int, nodes int32) ([]*unstructured.Unstructured, error) {
	tjYAML, err := yaml.Marshal(newTrainJob(benchNamespace, trainJobName(0), nodes))
	if err != nil {
		return nil, err
	}
	rtYAML, err := os.ReadFile(filepath.Join(util.RepoRoot(), runtimeFile))
	if err != nil {
		return nil, err
	}
	in, err := render.Read([]render.Source{{Name: "trainjob", Data: bytes.NewReader(tjYAML)}, {Name: runtimeFile, Data: bytes.NewReader(rtYAML)}})
	if err != nil {
		return nil, err
	}
	rt, err := render.NewRuntime()
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, n)
	base := in.TrainJob
	for i := range n {
		tj := base.DeepCopy()
		tj.Name = trainJobName(i)
		tj.UID = types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i))
		in.TrainJob = tj
		objs, err := render.Objects(context.Background(), rt, in)
		if err != nil {
			return nil, fmt.Errorf("rendering %s: %w", tj.Name, err)
		}
		js, err := jobSetOf(objs)
		if err != nil {
			return nil, err
		}
		out = append(out, js)
	}
	return out, nil
}

func jobSetOf(objs []*unstructured.Unstructured) (*unstructured.Unstructured, error) {
	kind := jobsetv1alpha2.GroupVersion.WithKind("JobSet")
	for _, o := range objs {
		if o.GroupVersionKind() == kind {
			return o, nil
		}
	}
	return nil, fmt.Errorf("the render has no JobSet")
}

// forEach runs f for 0..n-1 on parallel workers and stops at the first error. Transient
// apiserver errors (throttling, timeouts) are retried with backoff and counted.
func forEach(ctx context.Context, n, parallel int, f func(context.Context, int) error) (retries int64, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var next, retried atomic.Int64
	var once sync.Once
	var wg sync.WaitGroup
	for range max(parallel, 1) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if e := withRetries(ctx, func() error { return f(ctx, i) }, &retried); e != nil {
					once.Do(func() { err = e; cancel() })
					return
				}
			}
		})
	}
	wg.Wait()
	return retried.Load(), err
}

func withRetries(ctx context.Context, f func() error, retried *atomic.Int64) error {
	backoff := 100 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := f()
		if err == nil || attempt == 5 || !transient(err) {
			return err
		}
		retried.Add(1)
		sleep(ctx, backoff)
		backoff *= 2
	}
}

func transient(err error) bool {
	return apierrors.IsTooManyRequests(err) || apierrors.IsServerTimeout(err) || apierrors.IsTimeout(err) ||
		apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err)
}

// createIgnoringExists creates obj; an AlreadyExists after a retried timeout is a success.
func createIgnoringExists(ctx context.Context, c client.Client, obj client.Object) error {
	if err := c.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", obj.GetObjectKind().GroupVersionKind().Kind, obj.GetName(), err)
	}
	return nil
}

// unrelatedSpec describes the objects that exist in the cluster but are none of Gantry's.
type unrelatedSpec struct {
	Count      int     `json:"count"`
	LargeShare float64 `json:"largeShare"`
	LargeBytes int     `json:"largeBytes"`
}

// createUnrelated creates spec.Count ConfigMaps and Secrets (half each) spread over ten
// namespaces; a LargeShare of each kind carries LargeBytes of data, the rest a few bytes.
func createUnrelated(ctx context.Context, c client.Client, spec unrelatedSpec, parallel int) (int64, error) {
	const namespaces = 10
	for i := range namespaces {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("unrelated-%d", i)}}
		if err := c.Create(ctx, ns); err != nil {
			return 0, err
		}
	}
	large := bytes.Repeat([]byte("0123456789abcdef"), max(spec.LargeBytes/16, 1))
	every := 0
	if spec.LargeShare > 0 {
		every = int(1 / spec.LargeShare)
	}
	return forEach(ctx, spec.Count, parallel, func(ctx context.Context, i int) error {
		data := []byte("value")
		if every > 0 && (i/2)%every == 0 {
			data = large
		}
		meta := metav1.ObjectMeta{Namespace: fmt.Sprintf("unrelated-%d", i%namespaces), Name: fmt.Sprintf("obj-%05d", i),
			Labels: map[string]string{"app": "unrelated"}}
		var obj client.Object = &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"data": string(data)}}
		if i%2 == 1 {
			obj = &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"data": data}}
		}
		return createIgnoringExists(ctx, c, obj)
	})
}
