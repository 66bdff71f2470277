// Package framework starts the control plane of an integration suite: one envtest apiserver with
// Gantry's CRDs and the JobSet CRDs of the pinned sigs.k8s.io/jobset module.
package framework

import (
	"context"
	"fmt"
	"path/filepath"

	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/util"
)

// Framework owns one envtest control plane.
type Framework struct {
	env *envtest.Environment

	// Config reaches the apiserver as an administrator.
	Config *rest.Config
	// Client is a direct (uncached) client with Gantry's and JobSet's types registered.
	Client client.Client
	// Scheme has the core, Gantry and JobSet types.
	Scheme *runtime.Scheme
}

// NewScheme returns a scheme with the core, Gantry and JobSet types.
func NewScheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{
		clientgoscheme.AddToScheme, trainer.AddToScheme, jobsetv1alpha2.AddToScheme,
	} {
		if err := add(s); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// CRDPaths are the CRD directories every suite installs: Gantry's generated CRDs and JobSet's, read
// from the module cache.
func CRDPaths() ([]string, error) {
	jobset, err := util.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	return []string{
		filepath.Join(util.RepoRoot(), "config", "crd", "bases"),
		filepath.Join(jobset, "config", "components", "crd", "bases"),
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
	f.Scheme, err = NewScheme()
	if err != nil {
		return err
	}
	f.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths:     paths,
		ErrorIfCRDPathMissing: true,
		Scheme:                f.Scheme,
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
