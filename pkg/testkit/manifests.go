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

package testkit

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"

	admissionv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
	"github.com/gantry-ml/gantry/config/runtimes"
	"github.com/gantry-ml/gantry/internal/manifest"
)

// manifests holds the built config/webhook that hack/testkit-files.sh writes (kustomize's output,
// which no Go package of config/ can embed); the CRDs and runtimes come from the config/crd and
// config/runtimes packages, which a downstream module has in its module cache.
//
//go:embed manifests
var manifests embed.FS

// CRDs returns Gantry's CustomResourceDefinitions (TrainJob, TrainingRuntime,
// ClusterTrainingRuntime) as this version of Gantry installs them.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	objs, err := readDir(crd.Bases, "bases", nil)
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(objs))
	for _, u := range objs {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := fromUnstructured(u, "CustomResourceDefinition", crd); err != nil {
			return nil, err
		}
		crds = append(crds, crd)
	}
	return crds, nil
}

// WebhookInstallOptions returns Gantry's mutating and validating webhook configurations as the
// installation names and scopes them (the shipped runtimes, labelled
// trainer.kubeflow.org/webhook-validation=disabled, skip the validator). envtest points them at
// its local webhook server and generates that server's certificate when it starts.
func WebhookInstallOptions() (envtest.WebhookInstallOptions, error) {
	opts := envtest.WebhookInstallOptions{}
	objs, err := readFile(manifests, "manifests/webhook/webhook.yaml")
	if err != nil {
		return opts, err
	}
	for _, u := range objs {
		switch u.GetKind() {
		case "MutatingWebhookConfiguration":
			m := &admissionv1.MutatingWebhookConfiguration{}
			if err := fromUnstructured(u, u.GetKind(), m); err != nil {
				return opts, err
			}
			opts.MutatingWebhooks = append(opts.MutatingWebhooks, m)
		case "ValidatingWebhookConfiguration":
			v := &admissionv1.ValidatingWebhookConfiguration{}
			if err := fromUnstructured(u, u.GetKind(), v); err != nil {
				return opts, err
			}
			opts.ValidatingWebhooks = append(opts.ValidatingWebhooks, v)
		}
		// The Service and certificate Secret of an installation mean nothing to envtest, which
		// calls the webhooks by URL with a certificate of its own.
	}
	return opts, nil
}

// ShippedRuntimes returns the names of the ClusterTrainingRuntimes Gantry ships (config/runtimes),
// sorted.
func ShippedRuntimes() ([]string, error) {
	objs, err := shippedRuntimes()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(objs))
	for _, o := range objs {
		names = append(names, o.GetName())
	}
	slices.Sort(names)
	return names, nil
}

// selectRuntimes returns the shipped runtimes named, or all of them for nil names; a name Gantry
// does not ship is an error, so a typo cannot leave a suite without its runtime.
func selectRuntimes(names []string) ([]*unstructured.Unstructured, error) {
	objs, err := shippedRuntimes()
	if err != nil || names == nil {
		return objs, err
	}
	byName := map[string]*unstructured.Unstructured{}
	for _, o := range objs {
		byName[o.GetName()] = o
	}
	selected := make([]*unstructured.Unstructured, 0, len(names))
	for _, n := range names {
		o, ok := byName[n]
		if !ok {
			shipped, _ := ShippedRuntimes()
			return nil, fmt.Errorf("no shipped runtime %q; Gantry ships %v", n, shipped)
		}
		selected = append(selected, o)
	}
	return selected, nil
}

func shippedRuntimes() ([]*unstructured.Unstructured, error) {
	objs, err := readDir(runtimes.Files, ".", runtimes.IsRuntime)
	if err != nil {
		return nil, err
	}
	for _, o := range objs {
		if o.GetKind() != trainer.ClusterTrainingRuntimeKind {
			return nil, fmt.Errorf("runtime %q is a %s, not a %s", o.GetName(), o.GetKind(), trainer.ClusterTrainingRuntimeKind)
		}
	}
	return objs, nil
}

// readDir decodes every *.yaml file of an embedded directory that keep accepts (all for nil), in
// name order.
func readDir(fsys fs.FS, dir string, keep func(name string) bool) ([]*unstructured.Unstructured, error) {
	files, err := fs.Glob(fsys, path.Join(dir, "*.yaml"))
	if err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, f := range files {
		if keep != nil && !keep(path.Base(f)) {
			continue
		}
		fileObjs, err := readFile(fsys, f)
		if err != nil {
			return nil, err
		}
		objs = append(objs, fileObjs...)
	}
	if len(objs) == 0 {
		return nil, fmt.Errorf("no manifests embedded in %s", dir)
	}
	return objs, nil
}

func readFile(fsys fs.FS, name string) ([]*unstructured.Unstructured, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	objs, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return objs, nil
}

func fromUnstructured(u *unstructured.Unstructured, kind string, into any) error {
	if u.GetKind() != kind {
		return fmt.Errorf("%s %q is not a %s", u.GetKind(), u.GetName(), kind)
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, into); err != nil {
		return fmt.Errorf("decoding %s %q: %w", kind, u.GetName(), err)
	}
	return nil
}
