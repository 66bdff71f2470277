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

package jobset

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	gruntime "github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// manyJobs returns a TrainJob and its Info over a runtime of n replicated jobs, each of replicas
// Jobs of count pods.
func manyJobs(tb testing.TB, n int, replicas, count int32) (*trainer.TrainJob, *gruntime.Info) {
	tb.Helper()
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	node := utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node)
	jobs := make([]jobsetv1alpha2.ReplicatedJob, n)
	for i := range jobs {
		jobs[i] = *node.DeepCopy()
		jobs[i].Name = fmt.Sprintf("j%d", i)
	}
	spec.Template.Spec.ReplicatedJobs = jobs
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	info, err := core.NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		tb.Fatal(err)
	}
	for i := range info.PodSets {
		info.PodSets[i].Replicas, info.PodSets[i].Count = replicas, count
	}
	return tj, info
}

// The endpoints are built on every admission and every build: the pods of all replicated jobs
// together are bounded, not only each job's, or a runtime of 50 jobs of 10 replicas of 100,000
// pods took 5 s and 2 GiB per TrainJob admitted (issue 13).
func TestPreBuildSyncBoundsThePodsOfAllJobs(t *testing.T) {
	cases := map[string]struct {
		jobs            int
		replicas, count int32
		want            string
	}{
		"two jobs at the limit together": {jobs: 2, replicas: 5, count: 100_000},
		"two jobs past the limit together": {
			jobs: 2, replicas: 6, count: 100_000,
			want: "the replicated jobs would run 1200000 pods in all; the limit is 1000000",
		},
		"fifty jobs, each within the limit": {
			jobs: 50, replicas: 10, count: 100_000,
			want: "the replicated jobs would run 50000000 pods in all; the limit is 1000000",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj, info := manyJobs(t, tc.jobs, tc.replicas, tc.count)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			got := ""
			if err := (&JobSet{}).PreBuildSync(info, tj); err != nil {
				got = err.Error()
			}
			elapsed := time.Since(start)
			runtime.ReadMemStats(&after)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PreBuildSync() (-want,+got):\n%s", diff)
			}
			// A million endpoints take about 0.2 s and 60 MiB; refusing takes nothing.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 128<<20 || elapsed > 5*time.Second {
				t.Errorf("PreBuildSync took %v and %d MiB, want at most 5 s and 128 MiB", elapsed, alloc>>20)
			}
		})
	}
}

// BenchmarkPreBuildSyncLargest measures the largest build accepted: a million endpoints, of a
// TrainJob with the longest name JobSet allows them (44 characters: pod names are at most 63).
func BenchmarkPreBuildSyncLargest(b *testing.B) {
	tj, info := manyJobs(b, 10, 1, 100_000)
	tj.Name = strings.Repeat("x", 44)
	info.Subdomain = tj.Name
	b.ReportAllocs()
	for b.Loop() {
		if err := (&JobSet{}).PreBuildSync(info, tj); err != nil {
			b.Fatal(err)
		}
	}
}

// Build copies the PodSet containers into the pod template by name: matching each container
// against every other made a runtime of 100,000 containers (3 MiB) take minutes per build.
func TestBuildManyContainers(t *testing.T) {
	tj, info := manyJobs(t, 1, 1, 1)
	pod := &info.Template.ReplicatedJobs[0].Template.Spec.Template.Spec
	ps := &info.PodSets[0]
	for i := range 100_000 {
		name := fmt.Sprintf("c%d", i)
		pod.Containers = append(pod.Containers, corev1.Container{Name: name})
		pod.InitContainers = append(pod.InitContainers, corev1.Container{Name: "init-" + name})
		ps.Containers = append(ps.Containers, gruntime.Container{Name: name, Image: "img"})
		ps.InitContainers = append(ps.InitContainers, gruntime.Container{Name: "init-" + name, Image: "img"})
	}
	ps.InitContainers = append(ps.InitContainers, gruntime.Container{Name: "added", Image: "img"})
	start := time.Now()
	objs, err := (&JobSet{}).Build(t.Context(), info, tj)
	if err != nil {
		t.Fatal(err)
	}
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("Build took %v, want a few seconds at most", elapsed)
	}
	built := objs[0].Object.(*jobsetv1alpha2.JobSet).Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
	if got := built.Containers[99_999].Image; got != "img" {
		t.Errorf("the last container's image is %q, want img", got)
	}
	if got := len(built.InitContainers); got != 100_001 {
		t.Errorf("%d init containers, want 100,001: the template's and the added one", got)
	}
}
