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

package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/runtimeinstall"
)

const runtimesInstallLong = `install applies, server-side, every ClusterTrainingRuntime in DIR/*.yaml, then deletes the
runtimes that match LABELS but are not in DIR. Every runtime in DIR must carry LABELS. It waits
for the API server to serve ClusterTrainingRuntimes (a CRD created just before) up to the
timeout. uninstall deletes every runtime that matches LABELS. The Helm chart's runtime
installer hooks run these, in the cluster (or with --kubeconfig, as every verb).

Exit codes: 0 done, 1 the cluster refused or did not answer in time, 2 bad usage or a DIR that
holds something else than ClusterTrainingRuntimes.`

type runtimesInstallOptions struct {
	*Options
	verb     string
	dir      string
	selector string
	timeout  time.Duration
}

// newRuntimesInstallCommand is `gantry runtimes install` or `uninstall`, the Helm chart's
// runtime installer: it keeps exit codes of its own, its 1 being the cluster's refusal.
func newRuntimesInstallCommand(o *Options, verb string) *cobra.Command {
	ro := &runtimesInstallOptions{Options: o, verb: verb}
	use := "uninstall --selector LABELS"
	if verb == "install" {
		use = "install --dir DIR --selector LABELS"
	}
	cmd := &cobra.Command{
		Use:   use,
		Short: "The Helm chart's runtime installer: " + verb + " the shipped ClusterTrainingRuntimes",
		Long:  runtimesInstallLong,
		Example: `  gantry runtimes install --dir /etc/gantry/runtimes --selector app.kubernetes.io/instance=gantry
  gantry runtimes uninstall --selector app.kubernetes.io/instance=gantry`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return ro.run(cmd.Context()) },
	}
	f := cmd.Flags()
	if verb == "install" {
		f.StringVar(&ro.dir, "dir", "", "The directory `DIR` whose *.yaml files hold the runtimes (required).")
		_ = cmd.MarkFlagDirname("dir")
	}
	f.StringVar(&ro.selector, "selector", "", "The label selector `LABELS` of the runtimes this installation owns, e.g. a=b,c=d (required).")
	f.DurationVar(&ro.timeout, "timeout", 5*time.Minute, "Give up after this long.")
	return cmd
}

func (ro *runtimesInstallOptions) run(ctx context.Context) error {
	switch {
	case ro.selector == "":
		return usageErrorf("--selector is required")
	case ro.verb == "install" && ro.dir == "":
		return usageErrorf("--dir is required")
	}
	sel, err := labels.Parse(ro.selector)
	if err != nil {
		return usageErrorf("--selector: %v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, ro.timeout)
	defer cancel()
	if ro.verb == "uninstall" {
		in, err := ro.installer()
		if err == nil {
			err = in.Uninstall(ctx, sel)
		}
		return ro.report(exitRefused, err)
	}
	objs, err := runtimeinstall.Read(ro.dir)
	if err != nil {
		return ro.report(ExitUsage, err)
	}
	in, err := ro.installer()
	if err == nil {
		err = in.Install(ctx, objs, sel)
	}
	return ro.report(exitRefused, err)
}

func (ro *runtimesInstallOptions) installer() (*runtimeinstall.Installer, error) {
	c, err := ro.installerClient()
	if err != nil {
		return nil, err
	}
	return &runtimeinstall.Installer{Client: c, Out: ro.Streams.Out}, nil
}

// report ends the command: on an error, with one "gantry runtimes VERB: " line, the installer's
// own format, and code.
func (ro *runtimesInstallOptions) report(code int, err error) error {
	if err == nil {
		return nil
	}
	_, _ = fmt.Fprintf(ro.Streams.ErrOut, "gantry runtimes %s: %v\n", ro.verb, err)
	return quiet(code)
}

// installerClient is the runtime installer's client (runtimeinstall.NewClient: it maps
// ClusterTrainingRuntimes statically, as the CRD may be just created), at controller-runtime's
// rate of 20 requests a second, which it had when it ran on ctrl.GetConfig.
func (o *Options) installerClient() (client.Client, error) {
	if err := o.init(); err != nil {
		return nil, err
	}
	if o.installer == nil {
		cfg := rest.CopyConfig(o.cfg)
		if cfg.QPS == 0 {
			cfg.QPS, cfg.Burst = 20, 30
		}
		c, err := runtimeinstall.NewClient(cfg)
		if err != nil {
			return nil, err
		}
		o.installer = c
	}
	return o.installer, nil
}
