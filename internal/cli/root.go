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

// Package cli is the `gantry` command line, also installed as the kubectl plugin
// `kubectl-gantry`. The verbs print what internal/jobview computes, so the CLI and the web UI
// never disagree.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/jobview"
)

// Options are what every verb shares: the kubectl connection flags, the streams and the clock.
type Options struct {
	Streams     genericiooptions.IOStreams
	ConfigFlags *genericclioptions.ConfigFlags
	// Now is the clock of AGE columns and timeouts' messages; tests fix it.
	Now func() time.Time
	// Color is decided once: on a terminal, unless NO_COLOR is set.
	Color bool

	// The clients, made once from the flags by init; unit tests fill them with fakes instead.
	once      sync.Once
	cfg       *rest.Config
	reader    *jobview.Reader
	clientset kubernetes.Interface
	installer client.Client // the runtime installer's, made on first use
	err       error
}

// NewRootCommand builds `gantry` with every verb.
func NewRootCommand(o *Options) *cobra.Command {
	root := &cobra.Command{
		Use:   "gantry",
		Short: "Submit, watch and read Gantry TrainJobs (also `kubectl gantry`)",
		Long: `gantry submits TrainJobs and shows them the way a practitioner thinks of them: a state,
steps with their pods, progress, logs and events. It also runs as the kubectl plugin
"kubectl gantry", with kubectl's connection flags.

` + ExitCodesHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	if isKubectlPlugin() {
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl gantry"}
	}
	o.ConfigFlags.AddFlags(root.PersistentFlags())
	registerConnectionCompletions(root, o)
	root.SetIn(o.Streams.In)
	root.SetOut(o.Streams.Out)
	root.SetErr(o.Streams.ErrOut)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return withCode(ExitUsage, err) })
	root.AddGroup(&cobra.Group{ID: "jobs", Title: "TrainJobs:"}, &cobra.Group{ID: otherGroup, Title: "Other commands:"})
	for _, c := range []*cobra.Command{
		newTrainCommand(o), newOptimizeCommand(o), newRunCommand(o), newListCommand(o), newGetCommand(o),
		newLogsCommand(o), newWaitCommand(o), newEventsCommand(o), newDeleteCommand(o),
		newSuspendCommand(o, true), newSuspendCommand(o, false),
	} {
		c.GroupID = "jobs"
		root.AddCommand(c)
	}
	for _, c := range []*cobra.Command{newRenderCommand(o), newRuntimesCommand(o), newUICommand(o), newVersionCommand(o)} {
		c.GroupID = otherGroup
		root.AddCommand(c)
	}
	root.SetHelpCommandGroupID(otherGroup)
	root.SetCompletionCommandGroupID(otherGroup)
	// cobra adds "completion" as it runs, a command that prints its help, exit code 0, for a
	// shell it does not know; made now, it refuses one as `gantry runtimes` does.
	root.InitDefaultCompletionCmd()
	if c, _, err := root.Find([]string{"completion"}); err == nil && c.Name() == "completion" {
		c.RunE = func(cmd *cobra.Command, _ []string) error {
			return usageErrorf("give a shell: %s", subcommandNames(cmd))
		}
	}
	return root
}

// isKubectlPlugin: kubectl runs plugins by their file name, kubectl-gantry.
func isKubectlPlugin() bool {
	return strings.HasPrefix(baseName(os.Args[0]), "kubectl-gantry")
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// NewOptions returns the options of a real run: kubectl's flags, the wall clock, colour on
// a terminal.
func NewOptions(in io.Reader, out, errOut io.Writer) *Options {
	return &Options{
		Streams:     genericiooptions.IOStreams{In: in, Out: out, ErrOut: errOut},
		ConfigFlags: genericclioptions.NewConfigFlags(true),
		Now:         time.Now,
		Color:       colorWanted(out),
	}
}

// otherGroup is the help group of commands that are not about TrainJobs.
const otherGroup = "other"

// Execute runs the command line built by NewRootCommand and returns the process exit code.
func Execute(o *Options, root *cobra.Command, args []string) int {
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return ExitOK
	}
	if strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown flag") {
		err = withCode(ExitUsage, err)
	}
	if _, quiet := errors.AsType[*quietError](err); !quiet {
		_, _ = fmt.Fprintf(o.Streams.ErrOut, "error: %v\n", err)
	}
	return exitCode(err)
}

// quietError ends a command whose message was printed already: render and the runtime
// installer print their own ("gantry render: ...").
type quietError struct{ code int }

func (e *quietError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// quiet turns an exit code of a command that printed its own diagnostics into an error.
func quiet(code int) error {
	if code == 0 {
		return nil
	}
	return withCode(code, &quietError{code: code})
}

func (o *Options) init() error {
	o.once.Do(func() {
		o.cfg, o.err = o.ConfigFlags.ToRESTConfig()
		if o.err != nil {
			o.err = withCode(ExitUsage, fmt.Errorf("loading the kubeconfig: %w", o.err))
			return
		}
		if o.reader, o.err = jobview.NewReader(o.cfg); o.err != nil {
			return
		}
		o.clientset, o.err = kubernetes.NewForConfig(o.cfg)
	})
	return o.err
}

// Reader returns the job view reader of the cluster the flags name.
func (o *Options) Reader() (*jobview.Reader, error) {
	if err := o.init(); err != nil {
		return nil, err
	}
	return o.reader, nil
}

// Clientset returns a typed client, for pods/log.
func (o *Options) Clientset() (kubernetes.Interface, error) {
	if err := o.init(); err != nil {
		return nil, err
	}
	return o.clientset, nil
}

// Namespace is -n, else the kubeconfig context's namespace, else "default".
func (o *Options) Namespace() (string, error) {
	ns, _, err := o.ConfigFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return "", withCode(ExitUsage, fmt.Errorf("reading the namespace: %w", err))
	}
	return ns, nil
}

// noArgs is the argument check of render and the runtime installer, which take flags only.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageErrorf("unexpected argument %q: %s takes flags only (see --help)", args[0], cmd.CommandPath())
	}
	return nil
}

// exactlyOneName is the argument check of the verbs that take a TrainJob's name.
func exactlyOneName(_ *cobra.Command, args []string) error {
	switch len(args) {
	case 1:
		return nil
	case 0:
		return usageErrorf("give the TrainJob's name")
	default:
		return usageErrorf("give one TrainJob name, got %d arguments: %s", len(args), strings.Join(args, " "))
	}
}
