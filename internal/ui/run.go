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

package ui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/kubeauth"
	"github.com/gantry-ml/gantry/internal/multicluster"
)

// Options are the UI server's settings, shared by `gantry ui` and the lean gantry-ui binary so
// the two take the same flags.
type Options struct {
	Address       string
	AuthMode      string
	OpenBrowser   bool
	HistoryPoints int
	History       string
	UserHeader    string
	GroupsHeader  string
	TokenFile     string

	// HistoryMetricNames and HistoryMemory bound the progress history (HistoryLimits).
	HistoryMetricNames int
	HistoryMemory      string
	// Metrics serves /metrics (metrics.go).
	Metrics bool

	// NewLink replaces the token of TokenFile with a new one.
	NewLink bool
	// Header is header mode's proxy proof and impersonation limits (proxy.go).
	Header HeaderOptions
	// MaxClientConnections is how many connections one client address may hold open.
	MaxClientConnections int
	// Namespaces limits the UI to these namespaces; empty is every namespace.
	Namespaces []string
	// KueueNamespace holds MultiKueue's kubeconfig Secrets, read as each user to show a
	// dispatched job's worker pods.
	KueueNamespace string
}

// AddFlags registers the UI's flags on fs, with their defaults in o.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Address, "address", "127.0.0.1:0", "Where to listen: a loopback address (port 0 picks a free one).")
	fs.StringVar(&o.AuthMode, "auth-mode", "kubeconfig", "How users sign in: kubeconfig (your identity, loopback only), token or header.")
	fs.StringVar(&o.UserHeader, "user-header", "kubeflow-userid", "With --auth-mode=header, the header the trusted proxy names the user in.")
	fs.StringVar(&o.GroupsHeader, "groups-header", "", "With --auth-mode=header, a header with the user's groups, comma-separated.")
	fs.StringVar(&o.TokenFile, "token-file", "", "With --auth-mode=kubeconfig, keep the login token in this file (created 0600 if missing, refused if others may read it), so each start of the UI accepts the same link once.")
	fs.BoolVar(&o.NewLink, "new-link", false, "With --token-file, replace the saved login token: the old link stops working.")
	fs.IntVar(&o.MaxClientConnections, "max-client-connections", DefaultMaxClientConnections,
		"Connections one client address may hold open (of 1,024); a proxy in front of the UI is one address for all its users.")
	o.Header.AddFlags(fs)
	fs.BoolVar(&o.OpenBrowser, "open", false, "Sign the browser in: it opens a local page (mode 0600) that posts the login token, so the token is not in the browser's command line.")
	fs.IntVar(&o.HistoryPoints, "history-points", DefaultHistoryPoints, "Points kept per job for the progress curves.")
	fs.IntVar(&o.HistoryMetricNames, "history-metric-names", DefaultHistoryMetricNames,
		"Metric names charted per job, the first it reports; later names are not charted (the job's Progress tab says how many), their values counted in gantry_ui_history_dropped_total{reason=\"metric-names\"}.")
	fs.StringVar(&o.HistoryMemory, "history-memory", resource.NewQuantity(DefaultHistoryBytes, resource.BinarySI).String(),
		"Memory for every job's progress curves together, each counted at its full --history-points. Past it, finished jobs' curves make room, the oldest first; with none left, new curves are not charted (gantry_ui_history_dropped_total{reason=\"memory\"}).")
	fs.BoolVar(&o.Metrics, "metrics", true,
		"Serve Prometheus metrics at /metrics: in token and header modes to a bearer token allowed get on the non-resource URL /metrics (as the manager's), in kubeconfig mode to the signed-in browser.")
	fs.StringVar(&o.KueueNamespace, "kueue-namespace", multicluster.DefaultKueueNamespace,
		"Kueue's namespace, which holds the MultiKueue clusters' kubeconfig Secrets: a job MultiKueue runs on a worker shows the worker's pods to users who may read its Secret.")
	fs.StringVar(&o.History, "history", "memory", "Where the progress curves live: memory (lost when the UI stops) or configmap (a <job>-progress ConfigMap owned by each job, which needs create and update on ConfigMaps).")
}

// Connection is how gantry-ui reaches the cluster: a kubeconfig and kubectl's connection flags.
type Connection struct {
	Rules     *clientcmd.ClientConfigLoadingRules
	Overrides *clientcmd.ConfigOverrides
}

// NewFlagSet is gantry-ui's command line: the UI's flags into o, kubectl's connection flags
// (--kubeconfig, --context, --as, --request-timeout, ...) into the Connection. `gantry ui`
// forwards to gantry-ui the flags of this set its user gave.
func NewFlagSet(o *Options) (*pflag.FlagSet, *Connection) {
	fs := pflag.NewFlagSet("gantry-ui", pflag.ContinueOnError)
	o.AddFlags(fs)
	c := &Connection{Rules: clientcmd.NewDefaultClientConfigLoadingRules(), Overrides: &clientcmd.ConfigOverrides{}}
	fs.StringVar(&c.Rules.ExplicitPath, "kubeconfig", "", "Path to the kubeconfig file.")
	clientcmd.BindOverrideFlags(c.Overrides, fs, clientcmd.RecommendedConfigOverrideFlags(""))
	fs.Lookup("namespace").Usage = "Limit the UI to this namespace (default: every namespace)."
	return fs, c
}

// Config loads the kubeconfig: --kubeconfig, $KUBECONFIG, ~/.kube/config, or in a pod its
// service account.
func (c *Connection) Config() (*rest.Config, error) {
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(c.Rules, c.Overrides).ClientConfig()
}

// Namespace is -n: the one namespace the UI shows, or "" for every namespace.
func (c *Connection) Namespace() string { return c.Overrides.Context.Namespace }

// UsageError is a flag value Run refuses: the command lines exit 2 on it.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usageErrorf(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// Validate checks the flags before anything connects.
func (o *Options) Validate() error {
	if o.History != "memory" && o.History != "configmap" {
		return usageErrorf(`--history must be "memory" or "configmap", got %q`, o.History)
	}
	switch o.AuthMode {
	case "kubeconfig", "token", "header":
	default:
		return usageErrorf(`--auth-mode must be "kubeconfig", "token" or "header", got %q`, o.AuthMode)
	}
	if o.MaxClientConnections < 1 {
		return usageErrorf("--max-client-connections must be at least 1, got %d", o.MaxClientConnections)
	}
	if o.AuthMode == "header" {
		if err := o.Header.Validate(o.GroupsHeader); err != nil {
			return err
		}
	}
	if o.HistoryPoints < 2 {
		return usageErrorf("--history-points must be at least 2, got %d", o.HistoryPoints)
	}
	if o.HistoryMetricNames < 1 {
		return usageErrorf("--history-metric-names must be at least 1, got %d", o.HistoryMetricNames)
	}
	if _, err := o.historyBytes(); err != nil {
		return err
	}
	host, _, err := net.SplitHostPort(o.Address)
	if err != nil {
		return usageErrorf("--address %q: %v", o.Address, err)
	}
	if ip := net.ParseIP(host); o.AuthMode == "kubeconfig" && host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return usageErrorf("--address %q: kubeconfig mode serves your own identity, so it listens on loopback only (127.0.0.1)", o.Address)
	}
	return nil
}

// minHistoryMemory is the smallest --history-memory: a few jobs' curves at their full length.
const minHistoryMemory = 1 << 20

// historyBytes is --history-memory in bytes.
func (o *Options) historyBytes() (int64, error) {
	q, err := resource.ParseQuantity(o.HistoryMemory)
	if err != nil {
		return 0, usageErrorf("--history-memory %q: a quantity such as 48Mi: %v", o.HistoryMemory, err)
	}
	if q.Value() < minHistoryMemory {
		return 0, usageErrorf("--history-memory must be at least 1Mi, got %s", o.HistoryMemory)
	}
	return q.Value(), nil
}

// Run serves the UI for the cluster cfg reaches until ctx ends. The first line on out is the
// address (the login link in kubeconfig mode); warnings go to errOut, each once.
func (o *Options) Run(ctx context.Context, cfg *rest.Config, out, errOut io.Writer) error {
	if err := o.Validate(); err != nil {
		return err
	}
	historyBytes, err := o.historyBytes()
	if err != nil {
		return err
	}
	store, err := NewStore(cfg, StoreOptions{
		Namespaces: o.Namespaces, PersistHistory: o.History == "configmap",
		History: HistoryLimits{Points: o.HistoryPoints, MetricNames: o.HistoryMetricNames, Bytes: historyBytes},
		Warn:    onceEach(func(err error) { _, _ = fmt.Fprintf(errOut, "warning: %v\n", err) }),
	})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := store.Start(ctx); err != nil {
		return err
	}
	core, err := jobview.NewCoreClient(cfg)
	if err != nil {
		return err
	}
	srv, err := NewServer(store, ClientsetOpener{Clientset: core})
	if err != nil {
		return err
	}
	srv.Metrics, srv.KueueNamespace = o.Metrics, o.KueueNamespace
	ln, err := net.Listen("tcp", o.Address)
	if err != nil {
		return fmt.Errorf("listening on %s: %w", o.Address, err)
	}
	handler, err := o.secure(srv, cfg, ln.Addr(), out)
	if err != nil {
		_ = ln.Close()
		return err
	}
	limits := defaultConnLimits
	limits.perAddr = o.MaxClientConnections
	hs := limits.server(closeRefused(handler))
	go func() {
		<-ctx.Done()
		shutdown, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = hs.Shutdown(shutdown)
	}()
	if err := hs.Serve(limits.listen(ln)); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// secure wraps the server in the auth mode's sign-in and prints where to reach it.
func (o *Options) secure(srv *Server, cfg *rest.Config, addr net.Addr, out io.Writer) (http.Handler, error) {
	if o.AuthMode == "kubeconfig" {
		auth, err := o.localAuth()
		if err != nil {
			return nil, err
		}
		link := fmt.Sprintf("http://%s/jobs?token=%s", addr, auth.Token())
		_, _ = fmt.Fprintf(out, "Gantry UI: %s\n", link)
		if o.OpenBrowser {
			if _, err := openLogin(auth, addr.String(), browserCommand); err != nil {
				_, _ = fmt.Fprintf(out, "Could not open the browser (%v): open the link above.\n", err)
			}
		}
		return auth.Wrap(srv.Handler()), nil
	}
	header, groups := "", ""
	var proxy *Proxy
	if o.AuthMode == "header" {
		var err error
		if proxy, err = o.Header.Proxy(); err != nil {
			return nil, err
		}
		header, groups = o.UserHeader, o.GroupsHeader
	}
	reviews, err := kubeauth.NewReviewClient(cfg, nil)
	if err != nil {
		return nil, err
	}
	srv.Access, srv.BaseConfig = NewAccess(reviews, header, groups), cfg
	srv.Access.Proxy = proxy
	_, _ = fmt.Fprintf(out, "Gantry UI (%s mode): http://%s/jobs\n", o.AuthMode, addr)
	return srv.Access.Wrap(srv.Handler()), nil
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
