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
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gantry-ml/gantry/internal/ui"
)

type uiOptions struct {
	*Options
	address       string
	authMode      string
	openBrowser   bool
	historyPoints int
	history       string
	allNamespaces bool
	userHeader    string
	groupsHeader  string
	tokenFile     string
}

func newUICommand(o *Options) *cobra.Command {
	u := &uiOptions{Options: o}
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
		RunE: func(cmd *cobra.Command, _ []string) error { return u.run(cmd.Context(), cmd) },
	}
	cmd.Flags().StringVar(&u.address, "address", "127.0.0.1:0", "Where to listen: a loopback address (port 0 picks a free one).")
	cmd.Flags().StringVar(&u.authMode, "auth-mode", "kubeconfig", "How users sign in: kubeconfig (your identity, loopback only), token or header.")
	cmd.Flags().StringVar(&u.userHeader, "user-header", "kubeflow-userid", "With --auth-mode=header, the header the trusted proxy names the user in.")
	cmd.Flags().StringVar(&u.groupsHeader, "groups-header", "", "With --auth-mode=header, a header with the user's groups, comma-separated.")
	cmd.Flags().StringVar(&u.tokenFile, "token-file", "", "With --auth-mode=kubeconfig, keep the login token in this file (created 0600 if missing), so the link survives a restart.")
	cmd.Flags().BoolVar(&u.openBrowser, "open", false, "Open the login link in the browser.")
	cmd.Flags().IntVar(&u.historyPoints, "history-points", ui.DefaultHistoryPoints, "Points kept per job for the progress curves.")
	cmd.Flags().StringVar(&u.history, "history", "memory", "Where the progress curves live: memory (lost when the UI stops) or configmap (a <job>-progress ConfigMap owned by each job, which needs create and update on ConfigMaps).")
	cmd.Flags().BoolVarP(&u.allNamespaces, "all-namespaces", "A", true, "Show every namespace (the default); -n limits the UI to one.")
	return cmd
}

func (u *uiOptions) run(ctx context.Context, cmd *cobra.Command) error {
	if u.history != "memory" && u.history != "configmap" {
		return usageErrorf(`--history must be "memory" or "configmap", got %q`, u.history)
	}
	switch u.authMode {
	case "kubeconfig", "token", "header":
	default:
		return usageErrorf(`--auth-mode must be "kubeconfig", "token" or "header", got %q`, u.authMode)
	}
	host, _, err := net.SplitHostPort(u.address)
	if err != nil {
		return usageErrorf("--address %q: %v", u.address, err)
	}
	if ip := net.ParseIP(host); u.authMode == "kubeconfig" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageErrorf("--address %q: kubeconfig mode serves your own identity, so it listens on loopback only (127.0.0.1)", u.address)
	}
	var namespaces []string
	if cmd.Flags().Changed("namespace") {
		ns, err := u.Namespace()
		if err != nil {
			return err
		}
		namespaces = []string{ns}
	}
	if err := u.init(); err != nil {
		return err
	}
	store, err := ui.NewStore(u.cfg, ui.StoreOptions{
		Namespaces: namespaces, HistoryPoints: u.historyPoints, PersistHistory: u.history == "configmap",
		Warn: onceEach(func(err error) { _, _ = fmt.Fprintf(u.Streams.ErrOut, "warning: %v\n", err) }),
	})
	if err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := store.Start(ctx); err != nil {
		return err
	}
	srv, err := ui.NewServer(store, ui.ClientsetOpener{Clientset: u.clientset})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", u.address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", u.address, err)
	}
	var handler http.Handler
	switch u.authMode {
	case "kubeconfig":
		auth, err := u.localAuth()
		if err != nil {
			return err
		}
		handler = auth.Wrap(srv.Handler())
		link := fmt.Sprintf("http://%s/jobs?token=%s", ln.Addr(), auth.Token())
		_, _ = fmt.Fprintf(u.Streams.Out, "Gantry UI: %s\n", link)
		if u.openBrowser {
			openURL(link)
		}
	default:
		header := ""
		if u.authMode == "header" {
			header = u.userHeader
		}
		srv.Access, srv.BaseConfig = ui.NewAccess(u.clientset, header, u.groupsHeader), u.cfg
		handler = srv.Access.Wrap(srv.Handler())
		_, _ = fmt.Fprintf(u.Streams.Out, "Gantry UI (%s mode): http://%s/jobs\n", u.authMode, ln.Addr())
	}
	hs := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// openURL starts the desktop's browser; failing that, the printed link is enough.
func openURL(link string) {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	_ = exec.Command(name, link).Start()
}

// onceEach passes each distinct error to warn once: a failure that repeats every few seconds is
// told once, not every time.
func onceEach(warn func(error)) func(error) {
	var mu sync.Mutex
	seen := map[string]bool{}
	return func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if !seen[err.Error()] {
			seen[err.Error()] = true
			warn(err)
		}
	}
}

// localAuth is kubeconfig mode's login: a new token, or the one of --token-file.
func (u *uiOptions) localAuth() (*ui.LocalAuth, error) {
	if u.tokenFile == "" {
		return ui.NewLocalAuth()
	}
	if data, err := os.ReadFile(u.tokenFile); err == nil {
		auth, err := ui.LocalAuthWithToken(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("--token-file %s: %w", u.tokenFile, err))
		}
		return auth, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	auth, err := ui.NewLocalAuth()
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(u.tokenFile, []byte(auth.Token()+"\n"), 0o600); err != nil {
		return nil, fmt.Errorf("--token-file: %w", err)
	}
	return auth, nil
}
