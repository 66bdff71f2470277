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

// Command manager runs the Gantry controllers and admission webhooks.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/debug"
	"time"

	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/util/memlimit"
	"github.com/gantry-ml/gantry/internal/util/reachable"
	"github.com/gantry-ml/gantry/internal/version"
	"github.com/gantry-ml/gantry/internal/webhook"
)

// gcPercent is the manager's GOGC unless its environment sets one. Most of the manager's heap is
// its cache, live for the process's life, and Go's default (100) lets the heap grow to twice
// that before collecting; half of that headroom costs some CPU per TrainJob and saves memory at
// every size (docs/performance.md has both figures).
const gcPercent = 50

func main() {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(gcPercent)
	}
	memlimit.FromCgroup()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	var configFile, featureGates, certDir, pprofAddr string
	flag.StringVar(&configFile, "config", "", "path to a config.trainer.kubeflow.org/v1alpha1 Configuration file; defaults apply without one")
	flag.StringVar(&certDir, "webhook-cert-dir", config.CertDir, "directory of the webhook serving certificate (tls.crt, tls.key); in-process rotation writes it there")
	flag.StringVar(&featureGates, "feature-gates", "", "comma-separated Name=true|false pairs; override the file's featureGates")
	flag.StringVar(&pprofAddr, "pprof-bind-address", "", "address to serve net/http/pprof on, e.g. 127.0.0.1:8082, for profiling; empty (the default) disables it")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	log := ctrl.Log.WithName("setup")

	cfg, err := config.Load(configFile)
	if err != nil {
		return err
	}
	if err := config.ApplyFeatureGates(cfg.FeatureGates, featureGates); err != nil {
		return err
	}
	s, err := scheme.New()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctrl.SetupSignalHandler())
	defer cancel()
	// One loader of the serving certificate for the webhook and status servers.
	pair := cert.NewPair(certDir)
	opts := config.Options(cfg, s, pair)
	opts.PprofBindAddress = pprofAddr
	mgr, err := newManager(ctx, cfg, opts)
	if err != nil {
		return err
	}

	if err := controller.RequireJobSet(mgr.GetRESTMapper()); err != nil {
		return fmt.Errorf("setting up controllers and webhooks: %w", err)
	}
	if err := mgr.Add(pair); err != nil {
		return err
	}
	certsReady, err := setupCertificates(ctx, mgr, cfg, s, pair)
	if err != nil {
		return err
	}
	status, err := setupStatusServer(mgr, cfg, s, pair)
	if err != nil {
		return fmt.Errorf("setting up the status server: %w", err)
	}
	if err := mgr.AddHealthzCheck(cfg.Health.LivenessEndpointName, healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck(cfg.Health.ReadinessEndpointName, cert.ReadyCheck(certsReady, opts.WebhookServer.StartedChecker())); err != nil {
		return err
	}

	var setupErr error
	setupDone := make(chan struct{})
	// Controllers, webhooks and the status server start only once the serving certificate exists:
	// the servers cannot start without it, and a controller without its webhooks would accept
	// invalid jobs.
	go func() {
		defer close(setupDone)
		if setupErr = setupAfterCerts(ctx, mgr, certsReady, status); setupErr != nil {
			cancel()
		}
	}()
	log.Info("Starting the manager", "version", version.String(), "trainJobStatus", status != nil)
	warnFaults(log)
	err = mgr.Start(ctx)
	cancel()
	<-setupDone
	if setupErr != nil {
		return fmt.Errorf("setting up controllers and webhooks: %w", setupErr)
	}
	return err
}

// newManager creates the manager with its client settings, waiting for the apiserver: the
// manager's cache asks it about the kinds it restricts, so this is the process's first request.
func newManager(ctx context.Context, cfg *configapi.Configuration, opts ctrl.Options) (ctrl.Manager, error) {
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	restConfig.UserAgent = userAgent()
	// Leader election gets a client of its own: behind the controllers' rate limiter, a busy
	// manager's lease renewals would queue up until it lost the lease and exited.
	opts.LeaderElectionConfig = rest.CopyConfig(restConfig)
	if opts.LeaderElection {
		if opts.LeaderElectionResourceLockInterface, err = leaderLock(opts.LeaderElectionConfig, opts); err != nil {
			return nil, fmt.Errorf("the leader election lock: %w", err)
		}
		opts.LeaderElectionResourceLock = ""
	}
	if restConfig, err = withFaults(config.RESTConfig(cfg, restConfig), &opts); err != nil {
		return nil, err
	}
	var mgr ctrl.Manager
	err = reachable.Until(ctx, ctrl.Log.WithName("setup"), func(context.Context) (err error) {
		mgr, err = ctrl.NewManager(restConfig, opts)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("creating the manager: %w", err)
	}
	return mgr, nil
}

// setupCertificates adds in-process certificate rotation when certManagement is enabled. The
// returned channel closes once the serving certificate is loaded from disk and, with rotation,
// its CA is in the webhook configurations.
func setupCertificates(ctx context.Context, mgr ctrl.Manager, cfg *configapi.Configuration, s *apiruntime.Scheme, pair *cert.Pair) (<-chan struct{}, error) {
	if !*cfg.CertManagement.Enable {
		return pair.Loaded(), nil
	}
	namespace := cert.OperatorNamespace()
	direct, err := client.New(mgr.GetConfig(), client.Options{Scheme: s})
	if err != nil {
		return nil, err
	}
	if err := reachable.Until(ctx, ctrl.Log.WithName("setup"), func(ctx context.Context) error {
		return cert.EnsureSecret(ctx, direct, namespace, cfg.CertManagement.WebhookSecretName)
	}); err != nil {
		return nil, err
	}
	rotated := make(chan struct{})
	err = cert.AddRotator(mgr, cert.Options{
		Namespace:   namespace,
		ServiceName: cfg.CertManagement.WebhookServiceName,
		SecretName:  cfg.CertManagement.WebhookSecretName,
		CertDir:     pair.Dir(),
	}, rotated)
	if err != nil {
		return nil, fmt.Errorf("setting up certificate rotation: %w", err)
	}
	err = mgr.Add(&cert.DiskSync{
		Reader: direct,
		Secret: types.NamespacedName{Namespace: namespace, Name: cfg.CertManagement.WebhookSecretName},
		Dir:    pair.Dir(),
		Period: 2 * time.Second,
	})
	return cert.AllClosed(ctx, rotated, pair.Loaded()), err
}

func setupAfterCerts(ctx context.Context, mgr ctrl.Manager, certsReady <-chan struct{}, status *statusServer) error {
	select {
	case <-certsReady:
	case <-ctx.Done():
		return nil
	}
	log := ctrl.Log.WithName("setup")
	mapper := mgr.GetRESTMapper()
	fwkOpts := framework.Options{Log: log, Installed: func(gvk schema.GroupVersionKind) bool {
		_, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
		return err == nil
	}}
	var ctrlOpts []controller.Option
	if status != nil {
		fwkOpts.StatusServerURL = status.url
		ctrlOpts = append(ctrlOpts, controller.WithStatusServerCA(status.ca))
	}
	rt, err := plugins.NewRuntime(fwkOpts)
	if err != nil {
		return err
	}
	if err := controller.SetupControllers(mgr, rt, ctrlOpts...); err != nil {
		return err
	}
	if err := webhook.Setup(mgr, rt, clock.RealClock{}); err != nil {
		return err
	}
	if status != nil {
		return mgr.Add(status.server)
	}
	return nil
}

// userAgent names this process in the apiserver's audit log: the pod (a pod's hostname) and the
// process, so that the writes of two replicas, or of two lives of one, can be told apart.
func userAgent() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("gantry-manager/%s (%s, pid %d)", version.String(), host, os.Getpid())
}
