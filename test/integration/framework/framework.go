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

// Package framework starts the control plane of an integration suite: one envtest apiserver with
// Gantry's CRDs and the external CRDs of the pinned modules, and in-process managers.
package framework

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/util"
)

// Framework owns one envtest control plane.
type Framework struct {
	// Webhooks installs Gantry's webhook configurations; managers then serve them.
	Webhooks bool
	// WithoutGantryCRDs starts a cluster Gantry was never installed on (only the external CRDs),
	// for suites that install Gantry's CRDs themselves, as helm does.
	WithoutGantryCRDs bool

	env *envtest.Environment

	// Config reaches the apiserver as an administrator.
	Config *rest.Config
	// Client is a direct (uncached) client with Gantry's and JobSet's types registered.
	Client client.Client
	// Scheme has the core, Gantry and JobSet types.
	Scheme *runtime.Scheme
}

// CRDPaths are the CRD directories every suite installs: Gantry's generated CRDs (first), JobSet's and the
// coscheduling PodGroup's, read from the module cache at the versions go.mod pins.
func CRDPaths() ([]string, error) {
	jobset, err := util.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	schedulerPlugins, err := util.ModuleDir("sigs.k8s.io/scheduler-plugins")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(util.RepoRoot(), "config", "crd", "bases"),
		filepath.Join(jobset, "config", "components", "crd", "bases"),
		filepath.Join(schedulerPlugins, "manifests", "coscheduling", "crd.yaml"),
	}, nil
}

// Start starts the control plane and installs the CRDs.
func (f *Framework) Start(_ context.Context) error {
	assets, err := util.EnvtestAssets()
	if err != nil {
		return err
	}
	paths, err := CRDPaths()
	if err != nil {
		return err
	}
	if f.WithoutGantryCRDs {
		paths = paths[1:]
	}
	f.Scheme, err = scheme.New()
	if err != nil {
		return err
	}
	f.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     paths,
		ErrorIfCRDPathMissing: true,
		Scheme:                f.Scheme,
	}
	if f.Webhooks {
		if f.env.WebhookInstallOptions, err = WebhookInstallOptions(); err != nil {
			return fmt.Errorf("reading the webhook manifests: %w", err)
		}
	}
	f.Config, err = f.env.Start()
	if err != nil {
		return fmt.Errorf("starting envtest: %w", err)
	}
	f.Client, err = client.New(f.Config, client.Options{Scheme: f.Scheme})
	if err != nil {
		return fmt.Errorf("creating client: %w", err)
	}
	return nil
}

// Stop stops the control plane.
func (f *Framework) Stop() error {
	if f.env == nil {
		return nil
	}
	return f.env.Stop()
}

// Kubectl runs the toolchain's kubectl against this control plane and returns its stdout.
func (f *Framework) Kubectl(args ...string) (string, error) {
	user, err := f.env.ControlPlane.AddUser(envtest.User{Name: "kubectl", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding kubectl user: %w", err)
	}
	k, err := user.Kubectl()
	if err != nil {
		return "", fmt.Errorf("configuring kubectl: %w", err)
	}
	stdout, stderr, err := k.Run(args...)
	if err != nil {
		return "", fmt.Errorf("kubectl %v: %w: %s", args, err, readAll(stderr))
	}
	return readAll(stdout), nil
}

// WriteKubeconfig writes an administrator kubeconfig for the control plane into dir and returns
// its path, for processes the test starts.
func (f *Framework) WriteKubeconfig(dir string) (string, error) {
	user, err := f.env.ControlPlane.AddUser(envtest.User{Name: "gantry-manager", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", err
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// UserClient is a client authenticated as the user name in groups (the apiserver adds
// system:authenticated), for checking what RBAC lets an ordinary user do.
func (f *Framework) UserClient(name string, groups ...string) (client.Client, error) {
	user, err := f.env.ControlPlane.AddUser(envtest.User{Name: name, Groups: groups}, nil)
	if err != nil {
		return nil, fmt.Errorf("adding user %s: %w", name, err)
	}
	return client.New(user.Config(), client.Options{Scheme: f.Scheme})
}
