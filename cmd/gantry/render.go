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
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/gantry-ml/gantry/internal/features"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

const renderUsage = `Usage: gantry render -f FILE [-f FILE ...] [--validate=false | --validate-only] [--feature-gates G=bool] [--status-server-ca FILE]

Prints, as multi-document YAML, every object the Gantry controller would apply for the TrainJob in
the input: the runtime snapshot ConfigMap, then the plugins' objects (Secrets, ConfigMaps,
PodGroups) and the JobSet. The input needs exactly one TrainJob and the runtime it references;
CRD defaults are applied as the apiserver would, and objects without a namespace go to "default".
With the TrainJobStatus feature (on by default), the trainer pods get the status server of the
default install (kubeflow-trainer-controller-manager.kubeflow-system.svc:10443), and the
gantry-status-server-ca ConfigMap holds a placeholder instead of the cluster's CA.

First it runs the admission checks the cluster would (CRD schemas, CEL rules, webhooks): an input
the cluster would refuse is not rendered; its "error: <field>: <message>" lines go to standard
error, with exit code 1. "warning: <message>" lines go to standard error too, and rendering goes on.

Flags:
  -f FILE                  a YAML file with one or more documents; "-" reads standard input (repeatable)
  --validate=false         render without the admission checks
  --validate-only          print the admission checks' error and warning lines on standard output
                           instead of rendering
  --feature-gates G=bool   feature gates, as the manager takes them, e.g. TrainJobStatus=false
  --status-server-ca FILE  a PEM CA certificate to put into gantry-status-server-ca

Exit codes: 0 rendered (or valid), 1 the input fails the admission checks or cannot be built,
2 bad usage or input that cannot be read (unknown kind or field, malformed YAML, missing runtime).
`

type fileList []string

func (f *fileList) String() string     { return strings.Join(*f, ",") }
func (f *fileList) Set(v string) error { *f = append(*f, v); return nil }

// runRender implements `gantry render`. It exits 0 on success, 1 when validation finds errors or
// the build fails, and 2 on bad input or usage.
func runRender(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("render", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var files fileList
	fs.Var(&files, "f", "")
	validate := fs.Bool("validate", true, "")
	validateOnly := fs.Bool("validate-only", false, "")
	gates := fs.String("feature-gates", "", "")
	caFile := fs.String("status-server-ca", "", "")
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		_, _ = io.WriteString(stdout, renderUsage)
		return 0
	}
	if err != nil || fs.NArg() > 0 || len(files) == 0 {
		msg := "give at least one -f FILE"
		if err != nil {
			msg = err.Error()
		} else if fs.NArg() > 0 {
			msg = fmt.Sprintf("unexpected argument %q", fs.Arg(0))
		}
		_, _ = fmt.Fprintf(stderr, "gantry render: %s\n\n%s", msg, renderUsage)
		return 2
	}
	sources, closeAll, err := open(files, stdin)
	defer closeAll()
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "gantry render: %v\n", err)
		return 2
	}
	in, err := render.Read(sources)
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "gantry render: %v\n", err)
		return 2
	}
	rt, err := newRuntime(*gates)
	if err == nil && *caFile != "" {
		in.StatusServerCA, err = readCA(*caFile)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "gantry render: %v\n", err)
		return 2
	}
	ctx := context.Background()
	if *validateOnly {
		return printValidation(ctx, rt, in, stdout)
	}
	if *validate && printValidation(ctx, rt, in, stderr) != 0 {
		return 1
	}
	objs, err := render.Objects(ctx, rt, in)
	if err == nil {
		err = render.WriteYAML(stdout, objs)
	}
	if err != nil {
		_, _ = fmt.Fprintf(stderr, "gantry render: %s: %v\n", in.TrainJobDocument.Where(), err)
		return 1
	}
	return 0
}

// newRuntime applies --feature-gates to a copy of the gates, so rendering leaves the process's
// gates alone.
func newRuntime(gates string) (*core.Runtime, error) {
	g := features.Gates().DeepCopy()
	if gates != "" {
		if err := g.Set(gates); err != nil {
			return nil, fmt.Errorf("invalid --feature-gates: %w", err)
		}
	}
	return render.NewRuntimeWithStatus(g.Enabled(features.TrainJobStatus))
}

// readCA reads a PEM file holding at least one certificate.
func readCA(path string) (string, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--status-server-ca: %w", err)
	}
	for rest := data; ; {
		var block *pem.Block
		if block, rest = pem.Decode(rest); block == nil {
			return "", fmt.Errorf("--status-server-ca: %s holds no PEM certificate", path)
		}
		if block.Type == "CERTIFICATE" {
			return string(data), nil
		}
	}
}

func printValidation(ctx context.Context, rt *core.Runtime, in *render.Input, out io.Writer) int {
	warnings, errs := render.Validate(ctx, rt, in)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(out, "warning: %s\n", w)
	}
	for _, e := range errs {
		_, _ = fmt.Fprintf(out, "error: %s\n", render.FormatError(e))
	}
	if len(errs) > 0 {
		return 1
	}
	return 0
}

// open opens every file; "-" is standard input.
func open(files []string, stdin io.Reader) ([]render.Source, func(), error) {
	var closers []io.Closer
	closeAll := func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}
	sources := make([]render.Source, 0, len(files))
	for _, f := range files {
		if f == "-" {
			sources = append(sources, render.Source{Name: "<stdin>", Data: stdin})
			continue
		}
		fh, err := os.Open(f)
		if err != nil {
			return nil, closeAll, err
		}
		closers = append(closers, fh)
		sources = append(sources, render.Source{Name: f, Data: fh})
	}
	return sources, closeAll, nil
}
