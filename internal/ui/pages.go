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
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/duration"
	"sigs.k8s.io/yaml"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

func (s *Server) funcs() template.FuncMap {
	return template.FuncMap{
		"age": func(t time.Time) string {
			if t.IsZero() {
				return "-"
			}
			return duration.HumanDuration(s.Now().Sub(t))
		},
		"stateClass": func(st trainjob.State) string { return "state-" + strings.ToLower(string(st)) },
		"eta": func(p *jobview.Progress) string {
			if p == nil || p.ETASeconds == nil {
				return ""
			}
			return (time.Duration(*p.ETASeconds) * time.Second).String()
		},
		"percent": func(p *jobview.Progress) int {
			if p == nil || p.Percent == nil {
				return -1
			}
			return int(*p.Percent)
		},
		"jobURL":   func(ns, name string) string { return "/jobs/" + url.PathEscape(ns) + "/" + url.PathEscape(name) },
		"states":   func() []trainjob.State { return trainjob.States },
		"tabNames": func() []string { return tabs },
		"title": func(s string) string {
			if s == "yaml" {
				return "YAML"
			}
			return strings.ToUpper(s[:1]) + s[1:]
		},
		"optimizationURL": func(ns, name string) string {
			return "/optimizationjobs/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
		},
		"objective": func(t *optimization.Trial) string {
			if t == nil || t.Objective == nil {
				return "-"
			}
			return optimization.FormatValue(*t.Objective)
		},
		"add":   func(a, b int) int { return a + b },
		"has":   slices.Contains[[]trainjob.State],
		"count": thousands,
	}
}

// jobsPageData is what the Jobs page shows.
type jobsPageData struct {
	Title    string
	Filter   JobFilter
	Query    string
	Label    string
	Jobs     []jobview.Summary
	Pager    Pager
	Runtimes []string
}

func (s *Server) jobsData(ctx context.Context, r *http.Request) (*jobsPageData, error) {
	f, err := filterFrom(r)
	if err != nil {
		return nil, badRequest(err)
	}
	page, err := pageFrom(r)
	if err != nil {
		return nil, badRequest(err)
	}
	if err := s.allow(r, "list", f.Namespace); err != nil {
		return nil, err
	}
	jobs, err := s.Store.Jobs(ctx, f)
	if err != nil {
		return nil, err
	}
	rts, err := s.runtimes(ctx, r)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, rt := range rts {
		if !slices.Contains(names, rt.Name) {
			names = append(names, rt.Name)
		}
	}
	slices.Sort(names)
	pg := paginate(len(jobs), s.PageSize, page)
	pg.links(r.URL.Query())
	from, to := pg.rows()
	return &jobsPageData{
		Title: "Jobs", Filter: f, Query: r.URL.RawQuery, Label: r.URL.Query().Get("label"),
		Jobs: jobs[from:to], Pager: pg, Runtimes: names,
	}, nil
}

func (s *Server) jobsPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.jobsData(r.Context(), r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "jobs.html", d)
}

// jobsLive streams the rows of the Jobs page again after every change of a job it shows.
func (s *Server) jobsLive(w http.ResponseWriter, r *http.Request) {
	f, err := filterFrom(r)
	if err != nil {
		s.fail(w, badRequest(err))
		return
	}
	if err := s.allow(r, "list", f.Namespace); err != nil {
		s.fail(w, err)
		return
	}
	sub := s.Store.Changes.Subscribe(func(c Change) bool { return f.Namespace == "" || c.Namespace == "" || c.Namespace == f.Namespace })
	defer sub.Close()
	s.stream(w, r, sub, func(ctx context.Context, ev *sse) error {
		d, err := s.jobsData(ctx, r)
		if err != nil {
			return err
		}
		rows, err := s.fragment("rows", d)
		if err != nil {
			return err
		}
		pager, err := s.fragment("pager", d.Pager)
		if err != nil {
			return err
		}
		if err := ev.send("rows", rows); err != nil {
			return err
		}
		return ev.send("pager", pager)
	})
}

// jobPageData is what the Job page shows.
type jobPageData struct {
	Title string
	View  *jobview.View
	Tab   string
	Step  string
	YAML  string
	// Notice says, on the Progress tab, what the history does not chart of the job.
	Notice string
}

var tabs = []string{"steps", "logs", "events", "progress", "yaml"}

func (s *Server) jobData(ctx context.Context, r *http.Request) (*jobPageData, error) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if err := s.allow(r, "get", ns); err != nil {
		return nil, err
	}
	tj, err := s.Store.TrainJob(ctx, ns, name)
	if err != nil {
		return nil, err
	}
	rem := s.remote(ctx, r, tj)
	var pods []corev1.Pod
	switch {
	case rem == nil:
		if pods, err = s.Store.Pods(ctx, ns, name); err != nil {
			return nil, err
		}
	case rem.Reachable():
		if pods, err = rem.Reader.Pods(ctx, tj); err != nil {
			rem.Placement.PodsHidden = fmt.Sprintf("cannot list pods on worker %s: %s", rem.Placement.Worker, multicluster.Short(err))
		}
	}
	runtimes, err := s.Store.runtimeIndex(ctx)
	if err != nil {
		return nil, err
	}
	rt := runtimes[jobview.RuntimeKey(tj)]
	wl := s.Store.workloadIndex(ctx, ns)[string(tj.UID)]
	steps := jobview.Steps(pods)
	d := &jobPageData{Tab: r.URL.Query().Get("tab"), Step: r.URL.Query().Get("step")}
	if !slices.Contains(tabs, d.Tab) {
		d.Tab = "steps"
	}
	if d.Step == "" {
		d.Step = "node-0"
	}
	var events []jobview.Event
	if d.Tab == "events" {
		opener, err := s.opener(r)
		if err != nil {
			return nil, err
		}
		if rem.Reachable() && rem.Placement.PodsHidden == "" {
			opener = multiOpener{opener, ClientsetOpener{Clientset: rem.Core}}
		}
		if events, err = s.events(ctx, opener, tj.Namespace, tj.Name, tj.Status.JobsStatus); err != nil {
			return nil, err
		}
	}
	sum := jobview.Summarize(tj, rt, wl)
	if rem != nil {
		sum.MultiKueue = rem.Placement
	}
	d.View = jobview.NewView(sum, rt, tj, steps, events)
	d.Title = name
	if d.Tab == "progress" {
		d.Notice = historyNotice(s.Store.History.Note(tj.UID), s.Store.History.Limits())
	}
	if d.Tab == "yaml" {
		tj.ManagedFields = nil
		data, err := yaml.Marshal(tj)
		if err != nil {
			return nil, err
		}
		d.YAML = string(data)
	}
	return d, nil
}

func (s *Server) jobPage(w http.ResponseWriter, r *http.Request) {
	d, err := s.jobData(r.Context(), r)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "job.html", d)
}

// jobLive streams the Job page's header and open tab after every change of the job; the
// Progress tab gets its curves as JSON.
func (s *Server) jobLive(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if err := s.allow(r, "get", ns); err != nil {
		s.fail(w, err)
		return
	}
	sub := s.Store.Changes.Subscribe(func(c Change) bool { return c.Namespace == ns && c.Name == name })
	defer sub.Close()
	s.stream(w, r, sub, func(ctx context.Context, ev *sse) error {
		d, err := s.jobData(ctx, r)
		if err != nil {
			return err
		}
		html, err := s.fragment("header", d)
		if err != nil {
			return err
		}
		if err := ev.send("header", html); err != nil {
			return err
		}
		if d.Tab == "progress" {
			curves, err := json.Marshal(s.Store.History.Curves(d.View.UID))
			if err != nil {
				return err
			}
			if err := ev.send("notice", d.Notice); err != nil {
				return err
			}
			return ev.send("curves", string(curves))
		}
		if d.Tab == "logs" || d.Tab == "yaml" {
			return nil // the log has its own stream; the YAML is read on demand
		}
		if html, err = s.fragment("tab-"+d.Tab, d); err != nil {
			return err
		}
		return ev.send("tab", html)
	})
}

// historyNotice says in a sentence or two what the history does not chart of a job, and where
// the values are instead; "" when it charts every metric.
func historyNotice(n HistoryNote, l HistoryLimits) string {
	const status = " in the job's status (YAML tab)."
	switch {
	case n.Refused:
		return "This job's progress is not charted: the UI's progress history is at its memory budget (gantry-ui --history-memory). Its last report is" + status
	case n.Evicted:
		return "This finished job's curves were dropped to make room for running jobs' within the UI's memory budget (gantry-ui --history-memory). Its last report is" + status
	}
	var b strings.Builder
	if n.BeyondLimit > 0 {
		fmt.Fprintf(&b, "%s of this job's last report %s not charted: the UI charts the first %d metric names a job reports (gantry-ui --history-metric-names). ",
			metricCount(n.BeyondLimit), plural(n.BeyondLimit, "is", "are"), l.MetricNames)
	}
	if n.OverBudget > 0 {
		fmt.Fprintf(&b, "%s of this job's last report %s not charted: the UI's progress history was at its memory budget when %s first appeared (gantry-ui --history-memory). ",
			metricCount(n.OverBudget), plural(n.OverBudget, "is", "are"), plural(n.OverBudget, "its name", "their names"))
	}
	if b.Len() == 0 {
		return ""
	}
	b.WriteString(plural(n.BeyondLimit+n.OverBudget, "Its value is", "Their values are") + status)
	return b.String()
}

// metricCount is "1 metric" or "N metrics".
func metricCount(n int) string { return plural(n, "1 metric", strconv.Itoa(n)+" metrics") }

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func (s *Server) runtimesPage(w http.ResponseWriter, r *http.Request) {
	if err := s.allow(r, "list", ""); err != nil {
		s.fail(w, fmt.Errorf("%w (the Runtimes page counts the jobs of every namespace)", err))
		return
	}
	rts, err := s.runtimes(r.Context(), r)
	if err != nil {
		s.fail(w, err)
		return
	}
	jobs, err := s.Store.Jobs(r.Context(), JobFilter{})
	if err != nil {
		s.fail(w, err)
		return
	}
	type card struct {
		jobview.Runtime
		Jobs    int
		Command string
	}
	var cards []card
	for _, rt := range rts {
		c := card{Runtime: rt, Command: trainCommand(rt)}
		for _, j := range jobs {
			if j.Runtime.Name == rt.Name && j.Runtime.Kind == rt.Kind && (rt.Namespace == "" || rt.Namespace == j.Namespace) {
				c.Jobs++
			}
		}
		cards = append(cards, c)
	}
	slices.SortFunc(cards, func(a, b card) int { return strings.Compare(a.Kind+a.Namespace+a.Name, b.Kind+b.Namespace+b.Name) })
	s.render(w, "runtimes.html", map[string]any{"Title": "Runtimes", "Runtimes": cards})
}

// runtimes are the runtimes the request's user may list: in kubeconfig mode every one the
// store sees (the kubeconfig's user listed them).
func (s *Server) runtimes(ctx context.Context, r *http.Request) ([]jobview.Runtime, error) {
	rts, err := s.Store.Runtimes(ctx)
	if err != nil || s.Access == nil {
		return rts, err
	}
	u := UserFrom(r.Context())
	if u == nil {
		return nil, fmt.Errorf("%w: no user", errForbidden)
	}
	return s.Access.visibleRuntimes(ctx, u, rts)
}

// trainCommand is the command line that submits a job on a runtime, to copy.
func trainCommand(rt jobview.Runtime) string {
	var b strings.Builder
	b.WriteString("kubectl gantry train --runtime " + rt.Name)
	if rt.Namespace != "" {
		b.WriteString(" -n " + rt.Namespace)
	}
	fmt.Fprintf(&b, " --nodes %d", rt.Nodes)
	if rt.DevicesPerNode > 0 {
		b.WriteString(" --gpus-per-node " + strconv.FormatInt(rt.DevicesPerNode, 10))
	}
	b.WriteString(" --image " + shellQuote(rt.Image) + " -- python train.py")
	return b.String()
}

func shellQuote(s string) string {
	if s == "" || strings.ContainsAny(s, " '\"$`\\") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

func (s *Server) render(w http.ResponseWriter, page string, data any) {
	var buf bytes.Buffer
	if err := s.pages.ExecuteTemplate(&buf, page, data); err != nil {
		s.fail(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = buf.WriteTo(w)
}

func (s *Server) fragment(name string, data any) (string, error) {
	var buf bytes.Buffer
	err := s.pages.ExecuteTemplate(&buf, name, data)
	return buf.String(), err
}
