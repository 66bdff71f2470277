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
	"bytes"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/features"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/runtime/core"
)

// exitRefused is the 1 of render and the runtime installer, which run no TrainJob: the input,
// or the cluster, refused.
const exitRefused = 1

type renderOptions struct {
	*Options
	files        []string
	validate     bool
	validateOnly bool
	gates        string
	caFile       string
}

// newRenderCommand is `gantry render`. It keeps exit codes of its own, as it runs no TrainJob:
// 1 is an input the cluster would refuse.
func newRenderCommand(o *Options) *cobra.Command {
	ro := &renderOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "render -f FILE [-f FILE ...]",
		Short: "Print the objects the controller would apply for a TrainJob, offline",
		Long: `Prints, as multi-document YAML, every object the Gantry controller would apply for the TrainJob in
the input: the runtime snapshot ConfigMap, then the plugins' objects (Secrets, ConfigMaps,
PodGroups) and the JobSet. The input needs exactly one TrainJob and the runtime it references;
CRD defaults are applied as the apiserver would, and objects without a namespace go to "default".
It reads no cluster: the connection flags change nothing.

With the TrainJobStatus feature (on by default), the trainer pods get the status server of the
default install (kubeflow-trainer-controller-manager.kubeflow-system.svc:10443), and the
gantry-status-server-ca ConfigMap holds a placeholder instead of the cluster's CA.

First it runs the admission checks the cluster would (CRD schemas, CEL rules, webhooks): an input
the cluster would refuse is not rendered; its "error: <field>: <message>" lines go to standard
error, with exit code 1. "warning: <message>" lines go to standard error too, and rendering goes on.

Exit codes: 0 rendered (or valid), 1 the input fails the admission checks or cannot be built,
2 bad usage or input that cannot be read (unknown kind or field, malformed YAML, missing runtime).`,
		Example: `  gantry render -f examples/01-torch-multi-node.yaml -f config/runtimes/torch-distributed.yaml
  gantry render --validate-only -f job.yaml -f runtime.yaml
  cat job.yaml runtime.yaml | gantry render -f - --feature-gates TrainJobStatus=false`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return ro.run(cmd.Context()) },
	}
	f := cmd.Flags()
	f.StringArrayVarP(&ro.files, "filename", "f", nil, "A YAML `FILE` with one or more documents; \"-\" reads standard input (repeatable).")
	f.BoolVar(&ro.validate, "validate", true, "Run the admission checks first; --validate=false renders without them.")
	f.BoolVar(&ro.validateOnly, "validate-only", false, "Print the admission checks' error and warning lines on standard output instead of rendering.")
	f.StringVar(&ro.gates, "feature-gates", "", "Feature gates as the manager takes them, `G=bool`,..., e.g. TrainJobStatus=false.")
	f.StringVar(&ro.caFile, "status-server-ca", "", "A PEM CA certificate `FILE` to put into gantry-status-server-ca.")
	_ = cmd.MarkFlagFilename("filename", "yaml", "yml", "json")
	_ = cmd.MarkFlagFilename("status-server-ca")
	return cmd
}

func (ro *renderOptions) run(ctx context.Context) error {
	if len(ro.files) == 0 {
		return usageErrorf("give at least one -f FILE")
	}
	sources, closeAll, err := openSources(ro.files, ro.Streams.In)
	defer closeAll()
	if err != nil {
		return ro.fail(ExitUsage, err)
	}
	in, err := render.Read(sources)
	if err != nil {
		return ro.fail(ExitUsage, err)
	}
	rt, err := renderRuntime(ro.gates)
	if err == nil && ro.caFile != "" {
		in.StatusServerCA, err = readCA(ro.caFile)
	}
	if err != nil {
		return ro.fail(ExitUsage, err)
	}
	if ro.validateOnly {
		return quiet(printAdmission(ctx, rt, in, ro.Streams.Out))
	}
	if ro.validate {
		if code := printAdmission(ctx, rt, in, ro.Streams.ErrOut); code != ExitOK {
			return quiet(code)
		}
	}
	objs, err := render.Objects(ctx, rt, in)
	if err == nil {
		err = render.WriteYAML(ro.Streams.Out, objs)
	}
	if err != nil {
		return ro.fail(exitRefused, fmt.Errorf("%s: %w", in.TrainJobDocument.Where(), err))
	}
	return nil
}

// fail prints one "gantry render: " line, render's own format for an input it cannot render.
func (ro *renderOptions) fail(code int, err error) error {
	_, _ = fmt.Fprintf(ro.Streams.ErrOut, "gantry render: %v\n", err)
	return quiet(code)
}

// renderRuntime applies --feature-gates to a copy of the gates, so rendering leaves the
// process's gates alone.
func renderRuntime(gates string) (*core.Runtime, error) {
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

// printAdmission prints the admission checks' warning and error lines, and returns
// exitRefused when there is an error.
func printAdmission(ctx context.Context, rt *core.Runtime, in *render.Input, out io.Writer) int {
	warnings, refusals := admission(ctx, rt, in)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(out, "warning: %s\n", w)
	}
	for _, r := range refusals {
		_, _ = fmt.Fprintf(out, "error: %s\n", r)
	}
	if len(refusals) > 0 {
		return exitRefused
	}
	return ExitOK
}

// openSources opens every file; "-" is standard input. closeAll closes the files opened, also
// after an error.
func openSources(files []string, stdin io.Reader) (sources []render.Source, closeAll func(), err error) {
	var closers []io.Closer
	closeAll = func() {
		for _, c := range closers {
			_ = c.Close()
		}
	}
	sources = make([]render.Source, 0, len(files))
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

// render prints what the controller would create for tj, with the pipeline of `gantry render`.
// The runtime comes from the file, else the cluster, else the runtimes Gantry ships.
func (t *trainOptions) render(ctx context.Context, tj *unstructured.Unstructured, extra []*unstructured.Unstructured) error {
	var sources []render.Source
	for i, d := range append([]*unstructured.Unstructured{tj}, extra...) {
		data, err := toYAML(d.Object)
		if err != nil {
			return err
		}
		sources = append(sources, render.Source{Name: fmt.Sprintf("%s[%d]", sourceName(t.file), i), Data: bytes.NewReader(data)})
	}
	in, err := render.ReadFinding(sources, "", t.runtimeFinder(ctx, runtimeSourceAuto))
	if render.IsInputError(err) {
		return withCode(ExitUsage, err)
	}
	if err != nil {
		return err
	}
	rt, err := render.NewRuntime()
	if err != nil {
		return err
	}
	if err := t.admit(ctx, rt, in); err != nil {
		return err
	}
	objs, err := render.Objects(ctx, rt, in)
	if err != nil {
		return err
	}
	return render.WriteYAML(t.Streams.Out, objs)
}

// admit runs the admission checks of the cluster on the input: warnings are printed, refusals
// are a usage error listing each with its field.
func (o *Options) admit(ctx context.Context, rt *core.Runtime, in *render.Input) error {
	warnings, refusals := admission(ctx, rt, in)
	for _, w := range warnings {
		_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: %s\n", w)
	}
	if len(refusals) == 0 {
		return nil
	}
	return usageErrorf("the cluster would refuse this TrainJob:\n  %s", strings.Join(refusals, "\n  "))
}

// admission runs the cluster's admission checks on the input: their warnings, and their
// refusals, each with its field.
func admission(ctx context.Context, rt *core.Runtime, in *render.Input) (warnings, refusals []string) {
	warnings, errs := render.Validate(ctx, rt, in)
	refusals = make([]string, len(errs))
	for i, e := range errs {
		refusals[i] = render.FormatError(e)
	}
	return warnings, refusals
}

func sourceName(file string) string {
	if file == "" {
		return "flags"
	}
	return file
}

// Where runtimeFinder looks for a runtime the files lack.
const (
	runtimeSourceAuto    = "auto"    // the cluster, else the shipped runtimes
	runtimeSourceCluster = "cluster" // the cluster only
	runtimeSourceShipped = "shipped" // the shipped runtimes only
)

// runtimeFinder finds the runtime a TrainJob's files lack: on the cluster of the kubeconfig
// (read only), then among the runtimes Gantry ships, as source allows. It is the one place where
// train --dry-run=client and run --local get a runtime.
func (o *Options) runtimeFinder(ctx context.Context, source string) render.RuntimeFinder {
	return func(kind, namespace, name string) (*render.Source, error) {
		var clusterErr error
		if source != runtimeSourceShipped {
			var src *render.Source
			src, clusterErr = o.clusterRuntime(ctx, kind, namespace, name)
			switch {
			case src != nil:
				return src, nil
			case source == runtimeSourceCluster && clusterErr != nil:
				return nil, fmt.Errorf("reading %s %q from the cluster: %w", kind, name, clusterErr)
			case source == runtimeSourceCluster:
				return nil, withCode(ExitNotFound, fmt.Errorf("%s %q is neither in the files nor on the cluster", kind, name))
			}
		}
		src, err := render.ShippedRuntime(kind, namespace, name)
		if err != nil || src == nil {
			return nil, withCode(ExitNotFound, fmt.Errorf("%s %q not found in the files, on the cluster or among the runtimes Gantry ships", kind, name))
		}
		switch {
		case source == runtimeSourceAuto && clusterErr != nil:
			_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: using the %s %q Gantry ships: the cluster could not be asked (%v)\n", kind, name, clusterErr)
		case source == runtimeSourceAuto:
			_, _ = fmt.Fprintf(o.Streams.ErrOut, "warning: using the %s %q Gantry ships: it is not on the cluster\n", kind, name)
		}
		return src, nil
	}
}

// clusterRuntime reads a runtime from the cluster as YAML; nil when it is not there.
func (o *Options) clusterRuntime(ctx context.Context, kind, namespace, name string) (*render.Source, error) {
	if _, err := o.ConfigFlags.ToRESTConfig(); err != nil {
		return nil, err
	}
	reader, err := o.Reader()
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var obj client.Object = &trainer.ClusterTrainingRuntime{}
	if kind == trainer.TrainingRuntimeKind {
		obj = &trainer.TrainingRuntime{}
	}
	if err := reader.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, obj); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	obj.GetObjectKind().SetGroupVersionKind(trainer.GroupVersion.WithKind(kind))
	// As the controller snapshots it (uid and resourceVersion included), but for managedFields.
	obj.SetManagedFields(nil)
	data, err := yaml.Marshal(obj)
	if err != nil {
		return nil, err
	}
	return &render.Source{Name: "the cluster's " + kind + " " + name, Data: bytes.NewReader(data)}, nil
}
