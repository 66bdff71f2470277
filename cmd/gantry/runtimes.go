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
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gantry-ml/gantry/internal/runtimeinstall"
)

const runtimesUsage = `Usage:
  gantry runtimes install --dir DIR --selector LABELS [--kubeconfig FILE] [--timeout DURATION]
  gantry runtimes uninstall --selector LABELS [--kubeconfig FILE] [--timeout DURATION]

install applies, server-side, every ClusterTrainingRuntime in DIR/*.yaml, then deletes the
runtimes that match LABELS but are not in DIR. Every runtime in DIR must carry LABELS. It waits
for the API server to serve ClusterTrainingRuntimes (a CRD created just before) up to the
timeout. uninstall deletes every runtime that matches LABELS. The Helm chart's runtime
installer hooks run these.

Flags:
  --dir DIR            directory of runtime YAML files (install)
  --selector LABELS    label selector of the runtimes this installation owns, e.g. a=b,c=d
  --kubeconfig FILE    kubeconfig; default: in-cluster, else $KUBECONFIG or ~/.kube/config
  --timeout DURATION   give up after this long (default 5m)
`

// runRuntimes implements `gantry runtimes`. It exits 0 on success, 1 when the cluster refuses
// or does not answer, and 2 on bad usage or input.
func runRuntimes(args []string, stdout, stderr io.Writer) int {
	usageErr := func(msg string) int {
		_, _ = fmt.Fprintf(stderr, "gantry runtimes: %s\n\n%s", msg, runtimesUsage)
		return 2
	}
	if len(args) == 0 || (args[0] != "install" && args[0] != "uninstall") {
		return usageErr("give install or uninstall")
	}
	verb := args[0]
	fs := flag.NewFlagSet("runtimes "+verb, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dir := fs.String("dir", "", "")
	selector := fs.String("selector", "", "")
	kubeconfig := fs.String("kubeconfig", "", "")
	timeout := fs.Duration("timeout", 5*time.Minute, "")
	if err := fs.Parse(args[1:]); err != nil {
		return usageErr(err.Error())
	}
	switch {
	case fs.NArg() > 0:
		return usageErr(fmt.Sprintf("unexpected argument %q", fs.Arg(0)))
	case *selector == "":
		return usageErr("--selector is required")
	case verb == "install" && *dir == "":
		return usageErr("--dir is required")
	case verb == "uninstall" && *dir != "":
		return usageErr("--dir is only for install")
	}
	sel, err := labels.Parse(*selector)
	if err != nil {
		return usageErr(fmt.Sprintf("--selector: %v", err))
	}
	var in runtimeinstall.Installer
	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	if verb == "install" {
		objs, err := runtimeinstall.Read(*dir)
		if err != nil {
			_, _ = fmt.Fprintf(stderr, "gantry runtimes install: %v\n", err)
			return 2
		}
		if in, err = newInstaller(*kubeconfig, stdout); err == nil {
			err = in.Install(ctx, objs, sel)
		}
		return report(stderr, verb, err)
	}
	if in, err = newInstaller(*kubeconfig, stdout); err == nil {
		err = in.Uninstall(ctx, sel)
	}
	return report(stderr, verb, err)
}

func newInstaller(kubeconfig string, out io.Writer) (runtimeinstall.Installer, error) {
	var cfg *rest.Config
	var err error
	if kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", kubeconfig)
	} else {
		cfg, err = ctrl.GetConfig()
	}
	if err != nil {
		return runtimeinstall.Installer{}, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c, err := runtimeinstall.NewClient(cfg)
	return runtimeinstall.Installer{Client: c, Out: out}, err
}

func report(stderr io.Writer, verb string, err error) int {
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "gantry runtimes %s: %v\n", verb, err)
		return 1
	}
	return 0
}
