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

// Package runtimeinstall publishes the shipped ClusterTrainingRuntimes an installation enables,
// and removes the ones it installed that are no longer enabled. The Helm chart's runtime
// installer hook runs it as `gantry runtimes install`: the runtimes cannot be chart templates,
// because on a first install Helm maps every object before the release's CRDs exist.
package runtimeinstall

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/manifest"
)

// FieldOwner is the server-side apply field manager of installed runtimes.
const FieldOwner = "gantry-runtime-installer"

var (
	runtimeGVK     = trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind)
	runtimeListGVK = trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind + "List")
)

// NewClient returns a client that knows only ClusterTrainingRuntimes, through a static mapping:
// discovery would cache the CRD's absence, while the installer has to wait for the CRD that the
// same Helm release has just created.
func NewClient(cfg *rest.Config) (client.Client, error) {
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{trainer.GroupVersion})
	mapper.AddSpecific(runtimeGVK, trainer.GroupVersion.WithResource("clustertrainingruntimes"),
		trainer.GroupVersion.WithResource("clustertrainingruntime"), meta.RESTScopeRoot)
	return client.New(cfg, client.Options{Mapper: mapper, Scheme: runtime.NewScheme()})
}

// Read decodes the ClusterTrainingRuntimes in every *.yaml file of dir, in file name order. The
// hidden entries of a mounted ConfigMap (..data) are skipped. Anything else than a
// ClusterTrainingRuntime, and a name given twice, is an error.
func Read(dir string) ([]*unstructured.Unstructured, error) {
	files, err := manifest.Files(dir)
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	seen := sets.New[string]()
	for _, f := range files {
		docs, err := manifest.ReadFile(f)
		if err != nil {
			return nil, err
		}
		for _, obj := range docs {
			if obj.GroupVersionKind() != runtimeGVK {
				return nil, fmt.Errorf("%s: %s %q is not a %s", f, obj.GetObjectKind().GroupVersionKind(), obj.GetName(), runtimeGVK)
			}
			if obj.GetName() == "" || seen.Has(obj.GetName()) {
				return nil, fmt.Errorf("%s: runtime name %q is empty or given twice", f, obj.GetName())
			}
			seen.Insert(obj.GetName())
			objs = append(objs, obj)
		}
	}
	return objs, nil
}

// Installer applies and prunes runtimes.
type Installer struct {
	Client client.Client
	// Out receives one line per runtime applied or deleted.
	Out io.Writer
	// Interval between attempts while the API server does not serve ClusterTrainingRuntimes yet.
	Interval time.Duration
}

// Install applies every runtime server-side, then deletes the runtimes that match selector but
// are not among them. Each runtime must match selector itself, or it could never be pruned; an
// empty selector is refused, since it would match every runtime in the cluster.
func (in *Installer) Install(ctx context.Context, objs []*unstructured.Unstructured, selector labels.Selector) error {
	if err := checkSelector(selector); err != nil {
		return err
	}
	want := sets.New[string]()
	for _, obj := range objs {
		if !selector.Matches(labels.Set(obj.GetLabels())) {
			return fmt.Errorf("clustertrainingruntime %s lacks the labels of the selector %q: it could never be removed", obj.GetName(), selector)
		}
		want.Insert(obj.GetName())
	}
	for _, obj := range objs {
		err := in.retry(ctx, func() error {
			return in.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj), client.FieldOwner(FieldOwner), client.ForceOwnership)
		})
		if err != nil {
			return fmt.Errorf("applying clustertrainingruntime %s: %w", obj.GetName(), err)
		}
		in.printf("clustertrainingruntime/%s applied\n", obj.GetName())
	}
	return in.prune(ctx, selector, want)
}

// Uninstall deletes every runtime that matches selector.
func (in *Installer) Uninstall(ctx context.Context, selector labels.Selector) error {
	if err := checkSelector(selector); err != nil {
		return err
	}
	return in.prune(ctx, selector, sets.New[string]())
}

func (in *Installer) prune(ctx context.Context, selector labels.Selector, keep sets.Set[string]) error {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(runtimeListGVK)
	err := in.retry(ctx, func() error {
		return in.Client.List(ctx, list, client.MatchingLabelsSelector{Selector: selector})
	})
	if err != nil {
		return fmt.Errorf("listing clustertrainingruntimes %q: %w", selector, err)
	}
	for i := range list.Items {
		obj := &list.Items[i]
		if keep.Has(obj.Name) {
			continue
		}
		obj.SetGroupVersionKind(runtimeGVK)
		if err := in.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting clustertrainingruntime %s: %w", obj.Name, err)
		}
		in.printf("clustertrainingruntime/%s deleted\n", obj.Name)
	}
	return nil
}

func checkSelector(selector labels.Selector) error {
	if selector == nil || selector.Empty() {
		return errors.New("a non-empty --selector is required: it names the runtimes this installation owns")
	}
	return nil
}

// retry calls fn until it succeeds, fails with an error that waiting cannot fix, or ctx ends.
func (in *Installer) retry(ctx context.Context, fn func() error) error {
	interval := in.Interval
	if interval <= 0 {
		interval = time.Second
	}
	var last error
	err := wait.PollUntilContextCancel(ctx, interval, true, func(context.Context) (bool, error) {
		last = fn()
		if last == nil {
			return true, nil
		}
		return false, ignoreTransient(last)
	})
	if err != nil && last != nil && wait.Interrupted(err) {
		return fmt.Errorf("gave up waiting: %w", last)
	}
	return err
}

// ignoreTransient returns nil for the errors of an API server that does not serve
// ClusterTrainingRuntimes yet (the CRD is not established) or is briefly unavailable.
func ignoreTransient(err error) error {
	switch {
	case apierrors.IsNotFound(err), meta.IsNoMatchError(err), apierrors.IsServiceUnavailable(err),
		apierrors.IsTooManyRequests(err), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return nil
	}
	return err
}

func (in *Installer) printf(format string, args ...any) {
	if in.Out != nil {
		_, _ = fmt.Fprintf(in.Out, format, args...)
	}
}
