// Command manager runs the Gantry controllers.
package main

import (
	"flag"
	"fmt"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gantry-ml/gantry/internal/config"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/version"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run() error {
	var configFile, featureGates string
	flag.StringVar(&configFile, "config", "", "path to a config.trainer.kubeflow.org/v1alpha1 Configuration file; defaults apply without one")
	flag.StringVar(&featureGates, "feature-gates", "", "comma-separated Name=true|false pairs; override the file's featureGates")
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
	restConfig, err := ctrl.GetConfig()
	if err != nil {
		return fmt.Errorf("loading the kubeconfig: %w", err)
	}
	mgr, err := ctrl.NewManager(config.RESTConfig(cfg, restConfig), config.Options(cfg, s))
	if err != nil {
		return fmt.Errorf("creating the manager: %w", err)
	}
	rt, err := plugins.NewRuntime(framework.Options{})
	if err != nil {
		return err
	}
	if err := controller.SetupControllers(mgr, rt); err != nil {
		return err
	}
	if err := mgr.AddHealthzCheck("healthz", healthz.Ping); err != nil {
		return err
	}
	if err := mgr.AddReadyzCheck("readyz", healthz.Ping); err != nil {
		return err
	}
	log.Info("Starting the manager", "version", version.String())
	return mgr.Start(ctrl.SetupSignalHandler())
}
