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
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/rest"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Server serves the pages, the live streams and the static files.
type Server struct {
	Store *Store
	// Logs opens pod logs and reads events in kubeconfig mode.
	Logs LogOpener
	// Access, in token and header modes, authenticates users and decides what each may see;
	// logs and events are then read with the user's identity from BaseConfig.
	Access     *Access
	BaseConfig *rest.Config
	// Now is the clock of ages; tests fix it.
	Now func() time.Time
	// PageSize is how many rows the Jobs page shows at once; 0 shows them all.
	PageSize int
	// Metrics serves /metrics (metrics.go).
	Metrics bool
	// KueueNamespace holds MultiKueue's kubeconfig Secrets (multikueue.go); empty is Kueue's
	// default. Connect makes a worker's clients; nil is jobview.Connect.
	KueueNamespace string
	Connect        jobview.Connector

	pages *template.Template

	streamsMu sync.Mutex
	streams   map[string]int // live streams open per user name ("" in kubeconfig mode)
}

// NewServer parses the templates.
func NewServer(store *Store, logs LogOpener) (*Server, error) {
	s := &Server{Store: store, Logs: logs, Now: time.Now, PageSize: DefaultPageSize}
	t, err := template.New("").Funcs(s.funcs()).ParseFS(templateFS, "templates/*.html")
	if err != nil {
		return nil, err
	}
	s.pages = t
	return s, nil
}

// Handler routes every request.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(staticFS, "static")
	mux.Handle("GET /static/", http.StripPrefix("/static/", cacheForever(http.FileServerFS(static))))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/jobs", http.StatusFound) })
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	mux.HandleFunc("GET /jobs", s.jobsPage)
	mux.Handle("GET /live/jobs", s.limitStreams(http.HandlerFunc(s.jobsLive)))
	mux.HandleFunc("GET /jobs/{ns}/{name}", s.jobPage)
	mux.Handle("GET /live/jobs/{ns}/{name}", s.limitStreams(http.HandlerFunc(s.jobLive)))
	mux.Handle("GET /logs/{ns}/{name}", s.limitStreams(http.HandlerFunc(s.logs)))
	mux.HandleFunc("GET /runtimes", s.runtimesPage)
	mux.HandleFunc("GET /optimizationjobs", s.optimizationsPage)
	mux.HandleFunc("GET /optimizationjobs/{ns}/{name}", s.optimizationPage)
	if s.Metrics {
		mux.HandleFunc("GET /metrics", s.metrics)
	}
	return securityHeaders(compress(mux))
}

// contentSecurityPolicy lets a page load the UI's own script, stylesheet and streams only: no
// inline script, style or event handler (markup injected into a page runs nothing), nothing from
// another origin, no plugin, and no other site may frame the UI (clickjacking).
const contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// securityHeaders sets the headers every answer carries. Handler and the sign-in wrappers
// (which answer some requests themselves) each apply it, so no answer leaves without them.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}

func cacheForever(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=3600")
		h.ServeHTTP(w, r)
	})
}

// filterFrom reads the Jobs page's view state from the query string, so a URL shows the
// same view to whoever opens it.
func filterFrom(r *http.Request) (JobFilter, error) {
	q := r.URL.Query()
	f := JobFilter{Namespace: q.Get("ns"), Runtime: q.Get("runtime")}
	for _, s := range q["state"] {
		for part := range strings.SplitSeq(s, ",") {
			if part == "" {
				continue
			}
			st, err := trainjob.ParseState(part)
			if err != nil {
				return f, err
			}
			f.States = append(f.States, st)
		}
	}
	if l := q.Get("label"); l != "" {
		sel, err := labels.Parse(l)
		if err != nil {
			return f, fmt.Errorf("label selector %q: %w", l, err)
		}
		f.Selector = sel
	}
	return f, nil
}

// fail answers an error with the status it deserves and a sentence naming what went wrong.
func (s *Server) fail(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	switch {
	case apierrors.IsNotFound(err):
		code = http.StatusNotFound
	case apierrors.IsForbidden(err), errors.Is(err, errForbidden):
		code = http.StatusForbidden
	case errors.Is(err, errBadRequest):
		code = http.StatusBadRequest
	case errors.Is(err, context.Canceled):
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_ = s.pages.ExecuteTemplate(w, "error.html", map[string]any{"Code": code, "Status": http.StatusText(code), "Message": err.Error()})
}

var (
	errForbidden  = errors.New("forbidden")
	errBadRequest = errors.New("bad request")
)

func badRequest(err error) error { return fmt.Errorf("%w: %w", errBadRequest, err) }

// allow checks, in token and header modes, that the request's user may verb trainjobs in ns.
func (s *Server) allow(r *http.Request, verb, ns string) error {
	if s.Access == nil {
		return nil
	}
	u := UserFrom(r.Context())
	if u == nil {
		return fmt.Errorf("%w: no user", errForbidden)
	}
	return s.Access.CanReadJobs(r.Context(), u, verb, ns)
}

// opener reads logs and events as the request's user.
func (s *Server) opener(r *http.Request) (LogOpener, error) {
	u := UserFrom(r.Context())
	if s.Access == nil || u == nil {
		return s.Logs, nil
	}
	cs, err := jobview.NewCoreClient(UserConfig(s.BaseConfig, u))
	if err != nil {
		return nil, err
	}
	return ClientsetOpener{Clientset: cs}, nil
}
