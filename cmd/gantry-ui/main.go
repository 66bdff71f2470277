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

// Command gantry-ui serves Gantry's web UI: the server of `gantry ui` (internal/ui) in a binary of
// its own. It links no render pipeline, no kubectl libraries and no client for API groups it
// does not read, so it maps less than half the code of the gantry CLI; the Helm chart runs it.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/go-logr/logr"
	"github.com/spf13/pflag"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/internal/util/memlimit"
	"github.com/gantry-ml/gantry/internal/version"
)

// Exit codes: the same meanings as the gantry CLI's.
const (
	exitOK    = 0
	exitError = 1
	exitUsage = 2
)

const usage = `gantry-ui serves Gantry's web UI: Jobs (live), one job (steps, logs, events, progress curves,
YAML) and Runtimes. It is the server of "gantry ui" in a smaller binary; the Helm chart runs it.

Usage:
  gantry-ui [flags]

Examples:
  gantry-ui --kubeconfig ~/.kube/config --open
  gantry-ui --address 0.0.0.0:8080 --auth-mode token --history configmap

Without --kubeconfig it uses $KUBECONFIG, ~/.kube/config, or the pod's service account in a
cluster. Exit codes: 0 stopped by a signal, 1 an error while serving, 2 a flag is wrong.

Flags:
`

func main() {
	memlimit.FromCgroup()
	// Gantry's UI says what matters itself (warnings, once each); controller-runtime's cache logs
	// nothing a user acts on, and without a logger it prints a stack trace after 30 s.
	ctrllog.SetLogger(logr.Discard())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	opts := &ui.Options{}
	fs, conn := ui.NewFlagSet(opts)
	fs.SetOutput(stderr)
	showVersion := fs.Bool("version", false, "Print the version and exit.")
	fs.Usage = func() { _, _ = fmt.Fprint(stdout, usage+fs.FlagUsages()) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return exitOK
		}
		_, _ = fmt.Fprintf(stderr, "error: %v\nSee 'gantry-ui --help'.\n", err)
		return exitUsage
	}
	if *showVersion {
		_, _ = fmt.Fprintf(stdout, "gantry-ui %s\n", version.String())
		return exitOK
	}
	if fs.NArg() > 0 {
		_, _ = fmt.Fprintf(stderr, "error: gantry-ui takes no arguments, got %q\nSee 'gantry-ui --help'.\n", fs.Args())
		return exitUsage
	}
	if ns := conn.Namespace(); ns != "" {
		opts.Namespaces = []string{ns}
	}
	if err := opts.Validate(); err != nil {
		_, _ = fmt.Fprintf(stderr, "error: %v\n", err)
		return exitUsage
	}
	cfg, err := conn.Config()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "error: loading the kubeconfig: %v\n", err)
		return exitUsage
	}
	if err := opts.Run(ctx, cfg, stdout, stderr); err != nil {
		_, _ = fmt.Fprintf(stderr, "error: %v\n", err)
		if ue := (*ui.UsageError)(nil); errors.As(err, &ue) {
			return exitUsage
		}
		return exitError
	}
	return exitOK
}
