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

package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// violation is a broken invariant, with the first audit entry that shows it when there is one.
type violation struct {
	invariant string
	detail    string
	first     *auditEvent
}

func (v violation) String() string {
	s := v.invariant + ": " + v.detail
	if v.first != nil {
		s += "\n    first offending audit entry: " + v.first.String()
	}
	return s
}

// summary is a TrainJob's final state without timestamps: what I4 compares.
type summary struct {
	Conditions []string
	Jobs       []string
}

func summarize(tj *trainer.TrainJob) summary {
	var s summary
	for _, c := range tj.Status.Conditions {
		s.Conditions = append(s.Conditions, fmt.Sprintf("%s=%s %s: %s", c.Type, c.Status, c.Reason, c.Message))
	}
	for _, j := range tj.Status.JobsStatus {
		s.Jobs = append(s.Jobs, fmt.Sprintf("%s ready=%d succeeded=%d failed=%d active=%d suspended=%d",
			j.Name, ptr.Deref(j.Ready, 0), ptr.Deref(j.Succeeded, 0), ptr.Deref(j.Failed, 0), ptr.Deref(j.Active, 0), ptr.Deref(j.Suspended, 0)))
	}
	slices.Sort(s.Conditions)
	slices.Sort(s.Jobs)
	return s
}

// finalState reads the TrainJobs of ns, by name.
func finalState(ctx context.Context, ns string) (map[string]*trainer.TrainJob, error) {
	list := &trainer.TrainJobList{}
	if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	out := map[string]*trainer.TrainJob{}
	for i := range list.Items {
		out[list.Items[i].Name] = &list.Items[i]
	}
	return out, nil
}

// check evaluates I1-I3, and I4 when baseline (a no-fault run's summaries) is given.
func check(ctx context.Context, r *result, baseline map[string]summary) ([]violation, error) {
	jobs, err := finalState(ctx, r.ns)
	if err != nil {
		return nil, err
	}
	events, err := readAudit(r.auditFrom, r.ns)
	if err != nil {
		return nil, err
	}
	vs, err := checkJobSets(ctx, r.ns, jobs)
	if err != nil {
		return nil, err
	}
	vs = append(vs, checkCreates(events)...)
	vs = append(vs, checkTerminal(r.history.snapshot())...)
	if baseline != nil {
		vs = append(vs, checkFinal(jobs, baseline)...)
	}
	return vs, nil
}

// checkJobSets is I1.
func checkJobSets(ctx context.Context, ns string, jobs map[string]*trainer.TrainJob) ([]violation, error) {
	list := &jobsetv1alpha2.JobSetList{}
	if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err != nil {
		return nil, err
	}
	owned := map[string]int{}
	var vs []violation
	for i := range list.Items {
		js := &list.Items[i]
		owner := metav1.GetControllerOf(js)
		tj, ok := jobs[js.Name]
		switch {
		case owner == nil || owner.Kind != trainer.TrainJobKind || !ok:
			vs = append(vs, violation{invariant: "I1", detail: fmt.Sprintf("JobSet %s has no TrainJob (an orphan)", js.Name)})
		case owner.UID != tj.UID:
			vs = append(vs, violation{invariant: "I1", detail: fmt.Sprintf("JobSet %s is owned by UID %s, the TrainJob is %s", js.Name, owner.UID, tj.UID)})
		default:
			owned[js.Name]++
		}
	}
	for name := range jobs {
		if owned[name] != 1 {
			vs = append(vs, violation{invariant: "I1", detail: fmt.Sprintf("TrainJob %s has %d JobSets", name, owned[name])})
		}
	}
	return vs, nil
}

// writeVerbs are the audit verbs that change an object.
var writeVerbs = []string{"create", "update", "patch", "delete"}

// childResources are the objects Gantry creates for a TrainJob.
var childResources = []string{"jobsets", "configmaps", "secrets", "podgroups"}

// checkCreates is I2: at most one successful create per child object.
func checkCreates(events []auditEvent) []violation {
	seen := map[string]int{}
	var vs []violation
	for i := range events {
		e := &events[i]
		if e.Verb != "create" || e.ResponseStatus.Code != 201 || !slices.Contains(childResources, e.ObjectRef.Resource) ||
			e.ObjectRef.Name == "kube-root-ca.crt" {
			continue
		}
		key := e.ObjectRef.Resource + "/" + e.ObjectRef.Name
		if seen[key]++; seen[key] == 2 {
			vs = append(vs, violation{invariant: "I2", detail: key + " was created more than once", first: e})
		}
	}
	return vs
}

// checkTerminal is I3: once Complete or Failed, always that.
func checkTerminal(versions map[string][]trainer.TrainJobStatus) []violation {
	var vs []violation
	for name, statuses := range versions {
		reached := ""
		for _, st := range statuses {
			now := terminal(st.Conditions)
			if reached != "" && now != reached {
				vs = append(vs, violation{invariant: "I3", detail: fmt.Sprintf("TrainJob %s was %s, then %q", name, reached, now)})
				break
			}
			reached = now
		}
	}
	return vs
}

// checkFinal is I4.
func checkFinal(jobs map[string]*trainer.TrainJob, baseline map[string]summary) []violation {
	var vs []violation
	for name, want := range baseline {
		tj, ok := jobs[name]
		if !ok {
			vs = append(vs, violation{invariant: "I4", detail: "TrainJob " + name + " is missing"})
			continue
		}
		if diff := cmp.Diff(want, summarize(tj)); diff != "" {
			vs = append(vs, violation{invariant: "I4", detail: fmt.Sprintf("TrainJob %s ends unlike the run without faults (-without,+with):\n%s", name, diff)})
		}
	}
	return vs
}

// writeReport leaves what a failure needs: the seed and figures, the violations, the audit
// excerpt and the end of the manager's log.
func writeReport(name string, r *result, vs []violation) (string, error) {
	dir := filepath.Join(cfg.reports, fmt.Sprintf("%s-seed%d", name, r.seed))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	events, err := readAudit(r.auditFrom, r.ns)
	if err != nil {
		return "", err
	}
	var audit strings.Builder
	for _, e := range events {
		line, _ := json.Marshal(e)
		audit.Write(append(line, '\n'))
	}
	var lines []string
	for _, v := range vs {
		lines = append(lines, v.String())
	}
	files := map[string]string{
		"summary.txt": fmt.Sprintf("scenario %s, seed %d, namespace %s, mode %s\n%d TrainJobs at %.0f/s, %d manager kills; after the last, the manager caught up in %.1fs, every TrainJob had finished in %.1fs\n",
			name, r.seed, r.ns, cfg.mode, cfg.jobs, cfg.rate, r.kills, r.converged.Seconds(), r.finished.Seconds()),
		"violations.txt":  strings.Join(lines, "\n") + "\n",
		"audit.jsonl":     audit.String(),
		"manager.log.txt": cluster.LogTail(manager, 400),
	}
	for f, content := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}
