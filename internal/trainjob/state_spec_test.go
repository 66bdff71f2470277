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

package trainjob

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

var update = flag.Bool("update", false, "rewrite testdata/states.golden from DeriveState")

// axis is one dimension of what a TrainJob's state depends on: each value names itself and sets
// its part of the TrainJob, its Kueue Workload and its Jobs and pods.
type axis struct {
	name   string
	values []value
}

type value struct {
	name string
	set  func(*specCase)
}

type specCase struct {
	tj *trainer.TrainJob
	wl *Workload
	ch *Children
}

// stateAxes are every input DeriveState reads: the terminal conditions, spec.suspend, Kueue's
// label and Workload, a build error, the JobSet's counts and the Jobs' retries of failed pods.
var stateAxes = []axis{
	{"outcome", []value{
		{"none", func(*specCase) {}},
		{"Complete", func(c *specCase) { c.addCond(trainer.TrainJobComplete, "jobset completed") }},
		{"Failed", func(c *specCase) { c.addCond(trainer.TrainJobFailed, "jobset failed") }},
	}},
	{"suspend", []value{
		{"no", func(*specCase) {}},
		{"yes", func(c *specCase) { c.tj.Spec.Suspend = ptr.To(true) }},
	}},
	{"kueue", []value{
		{"none", func(*specCase) {}},
		{"label", func(c *specCase) { c.tj.Labels = map[string]string{QueueLabel: "team"} }},
		{"label+waiting", func(c *specCase) {
			c.tj.Labels = map[string]string{QueueLabel: "team"}
			c.wl = &Workload{Name: "wl", Active: true, Message: "couldn't assign flavors"}
		}},
		{"label+admitted", func(c *specCase) {
			c.tj.Labels = map[string]string{QueueLabel: "team"}
			c.wl = &Workload{Name: "wl", Active: true, Admitted: true, ClusterQueue: "cq"}
		}},
		{"label+stopped", func(c *specCase) {
			c.tj.Labels = map[string]string{QueueLabel: "team"}
			c.wl = &Workload{Name: "wl"}
		}},
		{"workload-without-label", func(c *specCase) { c.wl = &Workload{Name: "wl", Active: true} }},
	}},
	{"build", []value{
		{"ok", func(*specCase) {}},
		{"error", func(c *specCase) {
			c.tj.Status.BuildError = &trainer.TrainJobBuildError{Message: "runtime not found"}
		}},
	}},
	{"jobs", []value{
		{"none", func(*specCase) {}},
		{"initializer-busy", func(c *specCase) {
			c.tj.Status.JobsStatus = []trainer.JobStatus{jobs(DatasetInitializer, 1, 0, 0, 0), jobs(NodeJob, 0, 0, 0, 0)}
		}},
		{"nodes-pending", func(c *specCase) { c.tj.Status.JobsStatus = []trainer.JobStatus{jobs(NodeJob, 0, 0, 0, 0)} }},
		{"nodes-busy", func(c *specCase) { c.tj.Status.JobsStatus = []trainer.JobStatus{jobs(NodeJob, 2, 2, 0, 0)} }},
		{"nodes-succeeded", func(c *specCase) { c.tj.Status.JobsStatus = []trainer.JobStatus{jobs(NodeJob, 0, 0, 1, 0)} }},
		{"node-job-failed", func(c *specCase) { c.tj.Status.JobsStatus = []trainer.JobStatus{jobs(NodeJob, 0, 0, 0, 1)} }},
	}},
	{"pods", []value{
		{"unread", func(*specCase) {}},
		{"no-failure", func(c *specCase) {
			c.ch = &Children{Jobs: []batchv1.Job{batchJob(2, 2, 2, 0, 0, nil)}, Now: retryNow}
		}},
		{"retrying", func(c *specCase) {
			c.ch = &Children{Jobs: []batchv1.Job{batchJob(2, 1, 1, 0, 1, nil)},
				Pods: []corev1.Pod{failedPod("p0", 3, "Error", time.Second)}, Now: retryNow}
		}},
		{"recovered", func(c *specCase) {
			c.ch = &Children{Jobs: []batchv1.Job{batchJob(2, 2, 2, 0, 1, nil)},
				Pods: []corev1.Pod{failedPod("p0", 137, "OOMKilled", time.Hour)}, Now: retryNow}
		}},
	}},
}

func (c *specCase) addCond(t, msg string) {
	c.tj.Status.Conditions = append(c.tj.Status.Conditions, metav1.Condition{Type: t, Status: metav1.ConditionTrue, Reason: t, Message: msg})
}

// TestStateSpecification is the specification of a TrainJob's state: DeriveState over every
// combination of its inputs, one line each, in testdata/states.golden. A change to the state
// shows there line by line; `go test ./internal/trainjob -run TestStateSpecification -update`
// rewrites it after a deliberate change.
func TestStateSpecification(t *testing.T) {
	var b strings.Builder
	fmt.Fprintf(&b, "# DeriveState over every combination of its inputs (%s).\n", axisNames())
	fmt.Fprintf(&b, "# Regenerate: go test ./internal/trainjob -run TestStateSpecification -update\n")
	counts := map[State]int{}
	for combo := range combinations(len(stateAxes)) {
		c := &specCase{tj: &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: "ns"}}}
		var names []string
		for i, k := range combo {
			v := stateAxes[i].values[k]
			v.set(c)
			names = append(names, stateAxes[i].name+"="+v.name)
		}
		d := DeriveState(c.tj, c.wl, c.ch)
		counts[d.State]++
		fmt.Fprintf(&b, "%s -> %s: %s\n", strings.Join(names, " "), d.State, d.Message)
	}
	for _, st := range States {
		if counts[st] == 0 {
			t.Errorf("no combination of the inputs reaches %s: the axes miss an input, or the state is dead", st)
		}
	}
	golden := filepath.Join("testdata", "states.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), b.String()); diff != "" {
		t.Errorf("the states differ from %s (-want +got):\n%s", golden, diff)
	}
}

func axisNames() string {
	var names []string
	for _, a := range stateAxes {
		names = append(names, a.name)
	}
	return strings.Join(names, ", ")
}

// combinations yields every choice of one value per axis, the last axis varying fastest.
func combinations(n int) func(yield func([]int) bool) {
	return func(yield func([]int) bool) {
		combo := make([]int, n)
		for {
			if !yield(combo) {
				return
			}
			i := n - 1
			for ; i >= 0; i-- {
				combo[i]++
				if combo[i] < len(stateAxes[i].values) {
					break
				}
				combo[i] = 0
			}
			if i < 0 {
				return
			}
		}
	}
}
