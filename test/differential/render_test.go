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

package differential

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// TestFluxRendersAsTheReference renders the TrainJob of Kubeflow Trainer's Flux controller spec
// with both: the node job's size, the flux-installer init container (image, command, mounts),
// the volumes and the trainer container's command and mounts are the reference's, but for the
// one difference docs/compatibility.md lists: /dev/shm is writable (MPI and NCCL put their
// shared-memory segments there). The entrypoint ConfigMap and the CURVE Secret have the
// reference's names and keys; the scripts in them are Gantry's own (docs/compatibility.md).
func TestFluxRendersAsTheReference(t *testing.T) {
	c := UpstreamFlux()
	ref, ours := builds(t.Context(), t, c)
	refJob, ourJob := nodeJob(t, ref), nodeJob(t, ours)

	if diff := cmp.Diff(refJob.Replicas, ourJob.Replicas); diff != "" {
		t.Errorf("node replicas (-reference,+Gantry):\n%s", diff)
	}
	for _, f := range []struct {
		name      string
		ref, ours *int32
	}{{"parallelism", refJob.Template.Spec.Parallelism, ourJob.Template.Spec.Parallelism},
		{"completions", refJob.Template.Spec.Completions, ourJob.Template.Spec.Completions}} {
		if diff := cmp.Diff(f.ref, f.ours); diff != "" {
			t.Errorf("node %s (-reference,+Gantry):\n%s", f.name, diff)
		}
	}
	refPod, ourPod := refJob.Template.Spec.Template.Spec, ourJob.Template.Spec.Template.Spec
	if diff := cmp.Diff(refPod.InitContainers, ourPod.InitContainers); diff != "" {
		t.Errorf("init containers (-reference,+Gantry):\n%s", diff)
	}
	byName := cmpopts.SortSlices(func(a, b corev1.Volume) bool { return a.Name < b.Name })
	if diff := cmp.Diff(refPod.Volumes, ourPod.Volumes, byName); diff != "" {
		t.Errorf("volumes (-reference,+Gantry):\n%s", diff)
	}
	refNode, ourNode := container(t, refPod, "node"), container(t, ourPod, "node")
	if diff := cmp.Diff(refNode.Command, ourNode.Command); diff != "" {
		t.Errorf("node command (-reference,+Gantry):\n%s", diff)
	}
	// The one difference: the reference mounts /dev/shm read-only.
	wantMounts := slices.Clone(refNode.VolumeMounts)
	for i := range wantMounts {
		if wantMounts[i].MountPath == "/dev/shm" {
			if !wantMounts[i].ReadOnly {
				t.Errorf("the reference mounts /dev/shm writable now: remove the difference from docs/compatibility.md")
			}
			wantMounts[i].ReadOnly = false
		}
	}
	if diff := cmp.Diff(wantMounts, ourNode.VolumeMounts); diff != "" {
		t.Errorf("node mounts, /dev/shm made writable (-reference,+Gantry):\n%s", diff)
	}

	for _, kind := range []string{"ConfigMap", "Secret"} {
		if diff := cmp.Diff(dataKeys(t, ref, kind, "alpha-flux"), dataKeys(t, ours, kind, "alpha-flux")); diff != "" {
			t.Errorf("%s names and keys (-reference,+Gantry):\n%s", kind, diff)
		}
	}
}

// builds renders c with the reference and with Gantry, after the schema defaults both apply.
func builds(ctx context.Context, t *testing.T, c *Case) (ref, ours []map[string]any) {
	t.Helper()
	for _, obj := range []map[string]any{c.Runtime, c.TrainJob} {
		if errs := schemaErrors(ctx, gantry.schemas, obj); len(errs) > 0 {
			t.Fatalf("%s: %v", obj["kind"], errs)
		}
	}
	ref, err := reference.Objects(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
	if err != nil {
		t.Fatalf("the reference's build: %v", err)
	}
	ours, err = gantry.Objects(ctx, c.DeepCopy().Runtime, c.DeepCopy().TrainJob)
	if err != nil {
		t.Fatalf("Gantry's build: %v", err)
	}
	return ref, ours
}

func nodeJob(t *testing.T, objs []map[string]any) *jobsetv1alpha2.ReplicatedJob {
	t.Helper()
	js, err := jobSetOf(objs)
	if err != nil {
		t.Fatal(err)
	}
	for i := range js.Spec.ReplicatedJobs {
		if js.Spec.ReplicatedJobs[i].Name == "node" {
			return &js.Spec.ReplicatedJobs[i]
		}
	}
	t.Fatal("no replicated job node")
	return nil
}

func container(t *testing.T, pod corev1.PodSpec, name string) *corev1.Container {
	t.Helper()
	for i := range pod.Containers {
		if pod.Containers[i].Name == name {
			return &pod.Containers[i]
		}
	}
	t.Fatalf("no container %s", name)
	return nil
}

// dataKeys are "name/key" of the data of every object of kind whose name starts with prefix.
func dataKeys(t *testing.T, objs []map[string]any, kind, prefix string) []string {
	t.Helper()
	var out []string
	for _, o := range objs {
		name, _ := o["metadata"].(map[string]any)["name"].(string)
		if o["kind"] != kind || len(name) < len(prefix) || name[:len(prefix)] != prefix {
			continue
		}
		data, _ := o["data"].(map[string]any)
		for k := range data {
			out = append(out, name+"/"+k)
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Errorf("no %s named %s* with data", kind, prefix)
	}
	return out
}
