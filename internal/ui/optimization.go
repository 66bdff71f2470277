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
	"net/http"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// The OptimizationJobs pages: a list and one job's page with its trials, the best, and a
// scatter of each parameter against the objective (scatter.go). Each needs the user's right to
// list (or get) optimizationjobs; the trials, which are TrainJobs, are shown only to a user who
// may also list the namespace's trainjobs, as on the Jobs page.

// errNoOptimizationJobs: the store does not watch OptimizationJobs (no CRD, or no right).
var errNoOptimizationJobs = errors.New("OptimizationJobs are not available")

// startOptimizationJobs watches OptimizationJobs when the cluster serves them and the UI may
// list them (one probe at start, as for Kueue's Workloads); otherwise the pages say why.
func (s *Store) startOptimizationJobs(ctx context.Context) {
	probe := &trainer.OptimizationJobList{}
	err := s.direct.List(ctx, probe, client.Limit(1))
	if err == nil {
		_, err = s.cache.GetInformer(ctx, &trainer.OptimizationJob{})
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		s.optimizationsOff = fmt.Sprintf("%v: the UI cannot list them (%v)", errNoOptimizationJobs, err)
		return
	}
	s.optimizations = true
}

// optimizationsAvailable is nil when the store watches OptimizationJobs, else why not.
func (s *Store) optimizationsAvailable() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.optimizations {
		return nil
	}
	if s.optimizationsOff != "" {
		return errors.New(s.optimizationsOff)
	}
	return errNoOptimizationJobs
}

// OptimizationJobs lists the OptimizationJobs of ns ("" every namespace), newest first.
func (s *Store) OptimizationJobs(ctx context.Context, ns string) ([]trainer.OptimizationJob, error) {
	if err := s.optimizationsAvailable(); err != nil {
		return nil, err
	}
	list := &trainer.OptimizationJobList{}
	if err := s.cache.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	slices.SortFunc(list.Items, func(a, b trainer.OptimizationJob) int {
		if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
			return c
		}
		return strings.Compare(a.Namespace+"/"+a.Name, b.Namespace+"/"+b.Name)
	})
	return list.Items, nil
}

// OptimizationJob reads one OptimizationJob from the store.
func (s *Store) OptimizationJob(ctx context.Context, ns, name string) (*trainer.OptimizationJob, error) {
	if err := s.optimizationsAvailable(); err != nil {
		return nil, err
	}
	oj := &trainer.OptimizationJob{}
	return oj, s.cache.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, oj)
}

// Trials are an OptimizationJob's trials from the TrainJob informer.
func (s *Store) Trials(ctx context.Context, oj *trainer.OptimizationJob) ([]optimization.Trial, error) {
	list := &trainer.TrainJobList{}
	if err := s.cache.List(ctx, list, client.InNamespace(oj.Namespace),
		client.MatchingLabels{optimization.JobNameLabel: oj.Name}); err != nil {
		return nil, err
	}
	return optimization.Trials(oj, list.Items), nil
}

// allowResource checks, in token and header modes, that the request's user may verb the
// trainer.kubeflow.org resource in ns.
func (s *Server) allowResource(r *http.Request, verb, resource, ns string) error {
	if s.Access == nil {
		return nil
	}
	u := UserFrom(r.Context())
	if u == nil {
		return fmt.Errorf("%w: no user", errForbidden)
	}
	ok, err := s.Access.Can(r.Context(), u, verb, trainer.GroupVersion.Group, resource, "", ns)
	if err != nil {
		return err
	}
	if !ok {
		where := "in namespace " + ns
		if ns == "" {
			where = "in every namespace (choose one)"
		}
		return fmt.Errorf("%w: user %q may not %s %s %s", errForbidden, u.Name, verb, resource, where)
	}
	return nil
}

// optimizationSummary is an OptimizationJob as its row and its page's header show it.
type optimizationSummary struct {
	Namespace, Name string
	State           trainjob.State
	Message         string
	Metric          string
	Direction       string
	Algorithm       string
	NumTrials       int32
	ParallelTrials  int32
	Counts          optimization.Counts
	// Best is the best trial so far; nil before there is one, or when the trials are hidden.
	Best    *optimization.Trial
	Created time.Time
	// TrialsHidden says why the trials are not shown: the user may not list trainjobs here.
	TrialsHidden string
}

func summarizeOptimization(oj *trainer.OptimizationJob, trials []optimization.Trial, hidden string) optimizationSummary {
	sum := optimizationSummary{
		Namespace: oj.Namespace, Name: oj.Name,
		State: optimization.JobState(oj), Message: optimization.JobMessage(oj),
		Metric: optimization.ObjectiveMetric(oj), Direction: string(optimization.Direction(oj)),
		Algorithm: optimization.Algorithm(&oj.Spec), NumTrials: oj.Spec.NumTrials, ParallelTrials: oj.Spec.ParallelTrials,
		Counts: optimization.Count(oj, trials), Created: oj.CreationTimestamp.Time, TrialsHidden: hidden,
	}
	for i := range trials {
		if trials[i].Best {
			sum.Best = &trials[i]
		}
	}
	return sum
}

// trialsVisible is "" when the user may list the trainjobs of ns, else why the trials are
// hidden. A review that fails hides them too: the page still shows the OptimizationJob.
func (s *Server) trialsVisible(r *http.Request, ns string) string {
	if err := s.allowResource(r, "list", "trainjobs", ns); err != nil {
		return "The trials are not shown: " + err.Error() + "."
	}
	return ""
}

func (s *Server) optimizationsPage(w http.ResponseWriter, r *http.Request) {
	ns := r.URL.Query().Get("ns")
	if err := s.allowResource(r, "list", "optimizationjobs", ns); err != nil {
		s.fail(w, err)
		return
	}
	ojs, err := s.Store.OptimizationJobs(r.Context(), ns)
	if err != nil && !strings.HasPrefix(err.Error(), errNoOptimizationJobs.Error()) {
		s.fail(w, err)
		return
	}
	d := map[string]any{"Title": "OptimizationJobs", "Namespace": ns}
	if err != nil {
		d["Unavailable"] = err.Error()
	}
	hidden := map[string]string{}
	var rows []optimizationSummary
	for i := range ojs {
		oj := &ojs[i]
		why, seen := hidden[oj.Namespace]
		if !seen {
			why = s.trialsVisible(r, oj.Namespace)
			hidden[oj.Namespace] = why
		}
		var trials []optimization.Trial
		if why == "" {
			if trials, err = s.Store.Trials(r.Context(), oj); err != nil {
				s.fail(w, err)
				return
			}
		}
		rows = append(rows, summarizeOptimization(oj, trials, why))
	}
	d["Jobs"] = rows
	s.render(w, "optimizationjobs.html", d)
}

// optimizationPageData is what an OptimizationJob's page shows.
type optimizationPageData struct {
	Title      string
	Job        optimizationSummary
	Parameters []parameterRow
	Trials     []trialRow
	Scatters   []scatter
	Conditions []metav1.Condition
}

type parameterRow struct{ Name, Space string }

// trialRow is a trial in the table: its values in spec.parameters order.
type trialRow struct {
	Namespace, Name string
	Index           int
	State           trainjob.State
	Values          []string
	Objective       string
	Best            bool
}

func (s *Server) optimizationPage(w http.ResponseWriter, r *http.Request) {
	ns, name := r.PathValue("ns"), r.PathValue("name")
	if err := s.allowResource(r, "get", "optimizationjobs", ns); err != nil {
		s.fail(w, err)
		return
	}
	oj, err := s.Store.OptimizationJob(r.Context(), ns, name)
	if err != nil {
		s.fail(w, err)
		return
	}
	why := s.trialsVisible(r, ns)
	var trials []optimization.Trial
	if why == "" {
		if trials, err = s.Store.Trials(r.Context(), oj); err != nil {
			s.fail(w, err)
			return
		}
	}
	d := &optimizationPageData{Title: name, Job: summarizeOptimization(oj, trials, why), Conditions: oj.Status.Conditions}
	for _, p := range oj.Spec.Parameters {
		d.Parameters = append(d.Parameters, parameterRow{Name: p.Name, Space: spaceText(p.SearchSpace)})
	}
	for _, t := range trials {
		d.Trials = append(d.Trials, newTrialRow(oj, t))
	}
	d.Scatters = scatters(oj, trials)
	s.render(w, "optimizationjob.html", d)
}

func newTrialRow(oj *trainer.OptimizationJob, t optimization.Trial) trialRow {
	row := trialRow{Namespace: t.TrainJob.Namespace, Name: t.TrainJob.Name, Index: t.Index, Best: t.Best,
		State: trainjob.DeriveState(t.TrainJob, nil, nil).State, Objective: "-"}
	values := map[string]string{}
	for _, p := range t.Parameters {
		values[p.Name] = p.Value
	}
	for _, p := range oj.Spec.Parameters {
		v := values[p.Name]
		if v == "" {
			v = "-"
		}
		row.Values = append(row.Values, v)
	}
	if t.Objective != nil {
		row.Objective = optimization.FormatValue(*t.Objective)
	}
	return row
}

// spaceText writes a search space as the spec says it.
func spaceText(s *trainer.SearchSpace) string {
	switch {
	case s == nil:
		return "-"
	case s.Uniform != nil:
		return fmt.Sprintf("uniform [%s, %s] %s", s.Uniform.Min, s.Uniform.Max, orFloat(s.Uniform.Type))
	case s.LogUniform != nil:
		return fmt.Sprintf("logUniform [%s, %s] %s", s.LogUniform.Min, s.LogUniform.Max, orFloat(s.LogUniform.Type))
	case s.Categorical != nil:
		return "categorical: " + strings.Join(s.Categorical.Choices, ", ")
	}
	return "-"
}

func orFloat(t trainer.ParameterType) string {
	if t == "" {
		return string(trainer.ParameterTypeFloat)
	}
	return string(t)
}
