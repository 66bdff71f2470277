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
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/scheme"
	gantrywebhook "github.com/gantry-ml/gantry/internal/webhook"
)

// FieldOwner is the server-side apply field manager of the runtimes the kit installs.
const FieldOwner = "gantry-testkit"

// DefaultTimeout bounds each wait of the kit when Options.Timeout is zero: the manager's start,
// the webhook server, and the Wait* helpers.
const DefaultTimeout = 30 * time.Second

// Options say what Start runs besides Gantry's controllers and webhooks.
type Options struct {
	// Runtimes names the shipped ClusterTrainingRuntimes to install (ShippedRuntimes lists
	// them). Nil installs all of them; an unknown name is an error.
	Runtimes []string
	// NoRuntimes installs none of the shipped runtimes, whatever Runtimes says.
	NoRuntimes bool
	// Setup, when set, registers more controllers or webhooks with the manager before it starts
	// (a suite's own admission webhooks share Gantry's webhook server).
	Setup func(manager.Manager) error
	// Timeout bounds each wait; DefaultTimeout when zero.
	Timeout time.Duration
}

// Gantry is Gantry's manager running in the test process, started by Start.
type Gantry struct {
	// Client is a direct (uncached) client whose scheme has the core, Gantry and JobSet types.
	Client client.Client
	// Manager is the running manager, for its cache or its webhook server.
	Manager manager.Manager

	timeout  time.Duration
	cancel   context.CancelFunc
	done     chan struct{}
	err      error
	stopOnce sync.Once
}

// Start runs Gantry's manager (the TrainJob and runtime controllers and the admission webhooks)
// in-process against env, which must have been started after Environment or Configure prepared
// it, then installs the shipped runtimes Options select. It returns once the manager's cache has
// synced and its webhook server answers. The manager runs until Stop, or until ctx ends: pass a
// context that lives as long as the suite (not the context of a Ginkgo BeforeSuite node, which
// ends with the node).
//
// The manager runs as the installed one does (the same cache settings and client rate limits)
// except for what needs a cluster: no leader election, no metrics or probe endpoints, no
// certificate rotation (envtest generates the webhook certificate), and no training progress
// status server.
func Start(ctx context.Context, env *envtest.Environment, opts Options) (*Gantry, error) {
	if env == nil || env.Config == nil {
		return nil, errors.New("start the envtest environment before the kit")
	}
	wh := env.WebhookInstallOptions
	if len(wh.MutatingWebhooks) == 0 || len(wh.ValidatingWebhooks) == 0 || wh.LocalServingPort == 0 {
		return nil, errors.New("the environment installs no webhooks: build it with testkit.Environment or testkit.Configure")
	}
	runtimes := []string{}
	if !opts.NoRuntimes {
		runtimes = opts.Runtimes
	}
	selected, err := selectRuntimes(runtimes)
	if err != nil {
		return nil, err
	}
	g := &Gantry{timeout: opts.Timeout, done: make(chan struct{})}
	if g.timeout <= 0 {
		g.timeout = DefaultTimeout
	}
	mgr, err := newManager(env, opts.Setup)
	if err != nil {
		return nil, err
	}
	g.Manager = mgr
	if g.Client, err = client.New(env.Config, client.Options{Scheme: mgr.GetScheme(), Mapper: mgr.GetRESTMapper()}); err != nil {
		return nil, fmt.Errorf("creating the kit's client: %w", err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	g.cancel = cancel
	go func() {
		defer close(g.done)
		g.err = mgr.Start(runCtx)
	}()
	if err := g.waitStarted(ctx); err != nil {
		return nil, errors.Join(err, g.Stop())
	}
	if err := g.applyRuntimes(ctx, selected); err != nil {
		return nil, errors.Join(err, g.Stop())
	}
	return g, nil
}

// Stop stops the manager and returns its error, if any. It may be called more than once.
func (g *Gantry) Stop() error {
	g.stopOnce.Do(func() {
		g.cancel()
		<-g.done
	})
	return g.err
}

// newManager builds the manager from the installed defaults (a Configuration with every field
// defaulted) and registers Gantry's controllers and webhooks, then setup's.
func newManager(env *envtest.Environment, setup func(manager.Manager) error) (manager.Manager, error) {
	cfg, err := config.Load("")
	if err != nil {
		return nil, err
	}
	s, err := scheme.New()
	if err != nil {
		return nil, err
	}
	wh := env.WebhookInstallOptions
	opts := config.Options(cfg, s, cert.NewPair(wh.LocalServingCertDir))
	opts.LeaderElection = false
	opts.Metrics = metricsserver.Options{BindAddress: "0"}
	opts.HealthProbeBindAddress = "0"
	opts.WebhookServer = webhook.NewServer(webhook.Options{
		Host: wh.LocalServingHost, Port: wh.LocalServingPort, CertDir: wh.LocalServingCertDir,
		TLSOpts: []func(*tls.Config){config.TLSConfig(cfg.TLS)},
	})
	// Controller names are process-wide in controller-runtime: a suite may start a manager per
	// container.
	opts.Controller.SkipNameValidation = ptr.To(true)
	mgr, err := ctrl.NewManager(config.RESTConfig(cfg, env.Config), opts)
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	if err := setupGantry(mgr); err != nil {
		return nil, fmt.Errorf("setting up Gantry: %w", err)
	}
	if setup != nil {
		if err := setup(mgr); err != nil {
			return nil, fmt.Errorf("running Options.Setup: %w", err)
		}
	}
	return mgr, nil
}

// setupGantry registers the controllers and webhooks as the manager binary does, with the
// plugins of the APIs the apiserver serves (a suite without Volcano's CRD gets no Volcano gang).
func setupGantry(mgr manager.Manager) error {
	mapper := mgr.GetRESTMapper()
	rt, err := plugins.NewRuntime(framework.Options{
		Log: ctrl.Log.WithName("testkit"),
		Installed: func(gvk schema.GroupVersionKind) bool {
			_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			return err == nil
		},
	})
	if err != nil {
		return err
	}
	if err := controller.SetupControllers(mgr, rt); err != nil {
		return err
	}
	return gantrywebhook.Setup(mgr, rt, clock.RealClock{})
}

// waitStarted waits for the manager's cache and webhook server, or for its failure.
func (g *Gantry) waitStarted(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, g.timeout)
	defer cancel()
	synced := make(chan bool, 1)
	go func() { synced <- g.Manager.GetCache().WaitForCacheSync(ctx) }()
	select {
	case <-g.done:
		return fmt.Errorf("the manager stopped while starting: %w", g.err)
	case ok := <-synced:
		if !ok {
			return fmt.Errorf("the manager's cache did not sync within %s", g.timeout)
		}
	}
	started := g.Manager.GetWebhookServer().StartedChecker()
	var last error
	err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(context.Context) (bool, error) {
		last = started(nil)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the webhook server did not start within %s: %w", g.timeout, errors.Join(err, last))
	}
	return nil
}

// applyRuntimes installs runtimes as the chart's installer does: server-side apply.
func (g *Gantry) applyRuntimes(ctx context.Context, runtimes []*unstructured.Unstructured) error {
	for _, rt := range runtimes {
		err := g.Client.Apply(ctx, client.ApplyConfigurationFromUnstructured(rt), client.FieldOwner(FieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("installing ClusterTrainingRuntime %s: %w", rt.GetName(), err)
		}
	}
	return nil
}
