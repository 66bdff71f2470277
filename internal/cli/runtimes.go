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
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
)

// runtimeNotFound names both kinds looked up.
func runtimeNotFound(err error, ns, name string) error {
	if apierrors.IsNotFound(err) {
		return withCode(ExitNotFound, fmt.Errorf("runtime %q not found: no TrainingRuntime in namespace %q and no ClusterTrainingRuntime", name, ns))
	}
	return err
}

func newRuntimesCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:     "runtimes",
		Aliases: []string{"runtime"},
		Short:   "List and show the runtimes TrainJobs can use",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return usageErrorf("give a subcommand: %s", subcommandNames(cmd))
		},
	}
	cmd.AddCommand(newRuntimesListCommand(o), newRuntimesGetCommand(o),
		newRuntimesInstallCommand(o, "install"), newRuntimesInstallCommand(o, "uninstall"))
	return cmd
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

type runtimesOptions struct {
	*Options
	out           *outputFlags
	allNamespaces bool
}

func newRuntimesListCommand(o *Options) *cobra.Command {
	ro := &runtimesOptions{Options: o}
	cmd := &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List the TrainingRuntimes of the namespace and the ClusterTrainingRuntimes",
		Long: `List the TrainingRuntimes of the namespace (every namespace with -A) and the
ClusterTrainingRuntimes: NAME KIND FRAMEWORK NODES DEVICE IMAGE DEPRECATED. As in the Kubeflow
Python SDK, runtimes without the trainer.kubeflow.org/framework label are left out.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return ro.list(cmd.Context()) },
	}
	ro.out = addOutputFlags(cmd, true)
	cmd.Flags().BoolVarP(&ro.allNamespaces, "all-namespaces", "A", false, "List the TrainingRuntimes of every namespace.")
	return cmd
}

func (ro *runtimesOptions) list(ctx context.Context) error {
	ns := ""
	if !ro.allNamespaces {
		var err error
		if ns, err = ro.Namespace(); err != nil {
			return err
		}
	}
	r, err := ro.Reader()
	if err != nil {
		return err
	}
	all, err := r.ListRuntimes(ctx, ns, true, true)
	if err != nil {
		return err
	}
	var rts []jobview.Runtime
	for _, rt := range all {
		if rt.Framework != "" {
			rts = append(rts, rt)
		}
	}
	if !ro.out.table() {
		names := make([]string, len(rts))
		items := make([]any, len(rts))
		for i := range rts {
			names[i] = runtimeResource(rts[i].Kind) + "/" + rts[i].Name
			items[i] = rts[i]
		}
		doc := map[string]any{"apiVersion": jobview.APIVersion, "kind": "RuntimeList", "items": items}
		return ro.out.printDocument(ro.Streams.Out, doc, names)
	}
	tw := tableWriter(ro.Streams.Out)
	if !ro.out.noHeaders {
		cols := []string{"NAME", "KIND", "FRAMEWORK", "NODES", "DEVICE", "IMAGE", "DEPRECATED"}
		if ro.allNamespaces {
			cols = append([]string{"NAMESPACE"}, cols...)
		}
		if ro.out.wide() {
			cols = append(cols, "AGE")
		}
		row(tw, cols...)
	}
	for _, rt := range rts {
		ro.runtimeRow(tw, &rt)
	}
	if len(rts) == 0 {
		_, _ = fmt.Fprintln(ro.Streams.ErrOut, "No runtimes found.")
	}
	return tw.Flush()
}

func (ro *runtimesOptions) runtimeRow(w io.Writer, rt *jobview.Runtime) {
	dev := "cpu"
	if rt.Device != "" {
		dev = fmt.Sprintf("%s: %d", rt.Device, rt.DevicesPerNode)
	}
	cols := []string{rt.Name, rt.Kind, rt.Framework, strconv.Itoa(int(rt.Nodes)), dev, orDash(rt.Image), strconv.FormatBool(rt.Deprecated)}
	if ro.allNamespaces {
		cols = append([]string{orDash(rt.Namespace)}, cols...)
	}
	if ro.out.wide() {
		cols = append(cols, age(ro.Now(), rt.Created.Time))
	}
	row(w, cols...)
}

func runtimeResource(kind string) string {
	if kind == "TrainingRuntime" {
		return "trainingruntime.trainer.kubeflow.org"
	}
	return "clustertrainingruntime.trainer.kubeflow.org"
}

func newRuntimesGetCommand(o *Options) *cobra.Command {
	ro := &runtimesOptions{Options: o}
	cmd := &cobra.Command{
		Use:   "get NAME",
		Short: "Show one runtime: the namespace's TrainingRuntime first, else the ClusterTrainingRuntime",
		Long: `Show one runtime, looked up as the Kubeflow Python SDK does: the TrainingRuntime of that
name in the namespace first, then the ClusterTrainingRuntime. -o yaml and -o json print the
runtime object itself; the table prints its summary.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageErrorf("give the runtime's name")
			}
			return nil
		},
		ValidArgsFunction: o.completeRuntimes,
		RunE:              func(cmd *cobra.Command, args []string) error { return ro.get(cmd.Context(), args[0]) },
	}
	ro.out = addOutputFlags(cmd, true)
	return cmd
}

func (ro *runtimesOptions) get(ctx context.Context, name string) error {
	ns, err := ro.Namespace()
	if err != nil {
		return err
	}
	r, err := ro.Reader()
	if err != nil {
		return err
	}
	rt, obj, err := r.GetRuntime(ctx, ns, name)
	if err != nil {
		return runtimeNotFound(err, ns, name)
	}
	if !ro.out.table() {
		obj.SetManagedFields(nil)
		return ro.printObject(obj, rt)
	}
	tw := tableWriter(ro.Streams.Out)
	if !ro.out.noHeaders {
		row(tw, "NAME", "KIND", "FRAMEWORK", "NODES", "DEVICE", "IMAGE", "DEPRECATED")
	}
	ro.runtimeRow(tw, rt)
	return tw.Flush()
}

func (ro *runtimesOptions) printObject(obj client.Object, rt *jobview.Runtime) error {
	obj.GetObjectKind().SetGroupVersionKind(trainer.GroupVersion.WithKind(rt.Kind))
	return ro.out.printDocument(ro.Streams.Out, obj, []string{runtimeResource(rt.Kind) + "/" + rt.Name})
}
