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
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gantry-ml/gantry/internal/ui"
)

func newUICommand(o *Options) *cobra.Command {
	u := &ui.Options{}
	var allNamespaces bool
	cmd := &cobra.Command{
		Use:   "ui",
		Short: "Serve the web UI: jobs, steps, logs, events and training curves, live",
		Long: `Serve Gantry's web UI. Pages: Jobs (live), one job (steps, logs, events, progress curves,
YAML) and Runtimes. The progress curves are sampled while the UI runs (--history=configmap keeps
them in a ConfigMap owned by each job).

--auth-mode=kubeconfig (the default): your kubeconfig's identity, on 127.0.0.1 only. It prints a
login link holding a one-time token (and opens it with --open): other local users and web pages
cannot use your credentials through it.
--auth-mode=token: for a shared deployment. Each request carries a bearer token, checked with a
TokenReview (cached, rate-limited); a SubjectAccessReview decides which namespaces each user sees,
and logs and events are read with the user's own token.
--auth-mode=header: behind a trusted authenticating proxy (the Kubeflow dashboard's), which names
the user in --user-header; logs and events are read by impersonating that user.`,
		Example: `  gantry ui
  gantry ui -n team-a --address 127.0.0.1:8080 --open`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("namespace") {
				ns, err := o.Namespace()
				if err != nil {
					return err
				}
				u.Namespaces = []string{ns}
			}
			if lean := leanUI(); lean != "" {
				if args, ok := forwardedUIFlags(cmd); ok {
					return execLeanUI(lean, args, u)
				}
			}
			return runUI(cmd.Context(), o, u)
		},
	}
	u.AddFlags(cmd.Flags())
	cmd.Flags().BoolVarP(&allNamespaces, "all-namespaces", "A", true, "Show every namespace (the default); -n limits the UI to one.")
	return cmd
}

// runUI serves the UI in this process; the chart runs the same server as the leaner gantry-ui.
func runUI(ctx context.Context, o *Options, u *ui.Options) error {
	if err := u.Validate(); err != nil {
		return withCode(ExitUsage, err)
	}
	if err := o.init(); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	err := u.Run(ctx, o.cfg, o.Streams.Out, o.Streams.ErrOut)
	if ue := (*ui.UsageError)(nil); errors.As(err, &ue) {
		return withCode(ExitUsage, err)
	}
	return err
}

// leanUIName is the UI server's own binary, which `gantry ui` runs when it is installed beside
// gantry (make install, the image): it maps a third of gantry's code, so the UI stays within its
// memory budget (docs/ui.md).
const leanUIName = "gantry-ui"

// leanUI is the path of gantry-ui beside this executable, or "" when there is none.
func leanUI() string {
	if !canExec {
		return ""
	}
	self, err := os.Executable()
	if err != nil {
		return ""
	}
	if resolved, err := filepath.EvalSymlinks(self); err == nil {
		self = resolved
	}
	path := filepath.Join(filepath.Dir(self), leanUIName)
	if fi, err := os.Stat(path); err != nil || fi.IsDir() || fi.Mode()&0o111 == 0 {
		return ""
	}
	return path
}

// execLeanUI replaces this process with gantry-ui given args: the same server, the same output,
// the same process for signals.
func execLeanUI(path string, args []string, u *ui.Options) error {
	if err := u.Validate(); err != nil {
		return withCode(ExitUsage, err)
	}
	if err := execve(path, append([]string{path}, args...)); err != nil {
		return fmt.Errorf("running %s: %w", path, err)
	}
	return nil // not reached: execve returns only on failure
}

// uiIgnoredFlags are CLI flags that change nothing in the UI.
var uiIgnoredFlags = map[string]bool{"all-namespaces": true, "cache-dir": true}

// forwardedUIFlags renders the flags the user set on cmd for gantry-ui; ok is false when one of
// them is a flag gantry-ui lacks (--as-user-extra), which only serving in this process honours.
func forwardedUIFlags(cmd *cobra.Command) (args []string, ok bool) {
	lean, _ := ui.NewFlagSet(&ui.Options{})
	ok = true
	cmd.Flags().Visit(func(f *pflag.Flag) {
		switch {
		case uiIgnoredFlags[f.Name]:
		case lean.Lookup(f.Name) == nil:
			ok = false
		case isSlice(f):
			for _, v := range f.Value.(pflag.SliceValue).GetSlice() {
				args = append(args, "--"+f.Name+"="+v)
			}
		default:
			args = append(args, "--"+f.Name+"="+f.Value.String())
		}
	})
	return args, ok
}

func isSlice(f *pflag.Flag) bool {
	_, ok := f.Value.(pflag.SliceValue)
	return ok
}
