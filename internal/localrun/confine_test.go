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

package localrun

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// hostileJobSet is a valid one-step JobSet with a ConfigMap volume and a projected token, and
// its ConfigMap; change makes it hostile.
func hostileJobSet(t *testing.T, change func(*jobset.JobSet, *corev1.ConfigMap)) []*unstructured.Unstructured {
	t.Helper()
	js := &jobset.JobSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "jobset.x-k8s.io/v1alpha2", Kind: "JobSet"},
		ObjectMeta: metav1.ObjectMeta{Name: "job", Namespace: "ns"},
		Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{
			Name: "node", Replicas: 1,
			Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				Containers: []corev1.Container{{
					Name: "node", Command: []string{"/bin/true"},
					VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/config"}, {Name: "token", MountPath: "/token"}},
				}},
				Volumes: []corev1.Volume{
					{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
						LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"},
						Items:                []corev1.KeyToPath{{Key: "hosts", Path: "etc/hosts"}},
					}}},
					{Name: "token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: []corev1.VolumeProjection{
						{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{Path: "token"}},
					}}}},
				},
			}}}},
		}}},
	}
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{Name: "cfg", Namespace: "ns"},
		Data:       map[string]string{"hosts": "127.0.0.1"},
	}
	if change != nil {
		change(js, cm)
	}
	var objs []*unstructured.Unstructured
	for _, o := range []runtime.Object{js, cm} {
		m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
		if err != nil {
			t.Fatal(err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: m})
	}
	return objs
}

func podSpec(js *jobset.JobSet) *corev1.PodSpec {
	return &js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
}

// TestNewPlanRefusesWhatTheClusterRefuses: names and paths that Kubernetes, JobSet or the
// webhook would refuse (and that would lead a local run's writes out of its workdir) are refused
// with the field's path, as the API server's Invalid error (the CLI exits 2).
func TestNewPlanRefusesWhatTheClusterRefuses(t *testing.T) {
	long := strings.Repeat("a", 64)
	mount := func(js *jobset.JobSet) *corev1.VolumeMount { return &podSpec(js).Containers[0].VolumeMounts[0] }
	const pod = "spec.replicatedJobs[0].template.spec.template.spec."
	cases := []struct {
		name   string
		change func(*jobset.JobSet, *corev1.ConfigMap)
		field  string
	}{
		{"job name ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Name = "../x" }, "metadata.name"},
		{"job name a/../../b", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Name = "a/../../b" }, "metadata.name"},
		{"job name absolute", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Name = "/etc" }, "metadata.name"},
		{"job name of 64 characters", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Name = long }, "metadata.name"},
		{"job name starting with a digit", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Name = "1job" }, "metadata.name"},
		{"replicated job ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) { js.Spec.ReplicatedJobs[0].Name = "../x" }, "spec.replicatedJobs[0].name"},
		{"container a/../../b", func(js *jobset.JobSet, _ *corev1.ConfigMap) { podSpec(js).Containers[0].Name = "a/../../b" }, pod + "containers[0].name"},
		{"init container of 64 characters", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).InitContainers = []corev1.Container{{Name: long}}
		}, pod + "initContainers[0].name"},
		{"volume ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].Name, mount(js).Name = "../x", "../x"
		}, pod + "volumes[0].name"},
		{"volume absolute", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].Name, mount(js).Name = "/tmp/x", "/tmp/x"
		}, pod + "volumes[0].name"},
		{"volume of 64 characters", func(js *jobset.JobSet, _ *corev1.ConfigMap) { podSpec(js).Volumes[0].Name = long }, pod + "volumes[0].name"},
		{"mount of an undefined volume a/../../b", func(js *jobset.JobSet, _ *corev1.ConfigMap) { mount(js).Name = "a/../../b" }, pod + "containers[0].volumeMounts[0].name"},
		{"mount path with ..", func(js *jobset.JobSet, _ *corev1.ConfigMap) { mount(js).MountPath = "/config/../../etc" }, pod + "containers[0].volumeMounts[0].mountPath"},
		{"sub path ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) { mount(js).SubPath = "../x" }, pod + "containers[0].volumeMounts[0].subPath"},
		{"sub path a/../../b", func(js *jobset.JobSet, _ *corev1.ConfigMap) { mount(js).SubPath = "a/../../b" }, pod + "containers[0].volumeMounts[0].subPath"},
		{"sub path absolute", func(js *jobset.JobSet, _ *corev1.ConfigMap) { mount(js).SubPath = "/etc" }, pod + "containers[0].volumeMounts[0].subPath"},
		{"item path ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].ConfigMap.Items[0].Path = "../x"
		}, pod + "volumes[0].configMap.items[0].path"},
		{"item path a/../../b", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].ConfigMap.Items[0].Path = "a/../../b"
		}, pod + "volumes[0].configMap.items[0].path"},
		{"item path absolute", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].ConfigMap.Items[0].Path = "/etc/passwd"
		}, pod + "volumes[0].configMap.items[0].path"},
		{"item path ..x", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[0].ConfigMap.Items[0].Path = "..data"
		}, pod + "volumes[0].configMap.items[0].path"},
		{"secret item path ../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes = append(podSpec(js).Volumes, corev1.Volume{Name: "s", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
				SecretName: "s", Optional: ptr.To(true), Items: []corev1.KeyToPath{{Key: "k", Path: "../x"}},
			}}})
		}, pod + "volumes[2].secret.items[0].path"},
		{"token path ../../x", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[1].Projected.Sources[0].ServiceAccountToken.Path = "../../x"
		}, pod + "volumes[1].projected.sources[0].serviceAccountToken.path"},
		{"projected item path absolute", func(js *jobset.JobSet, _ *corev1.ConfigMap) {
			podSpec(js).Volumes[1].Projected.Sources = append(podSpec(js).Volumes[1].Projected.Sources, corev1.VolumeProjection{
				ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: "cfg"}, Items: []corev1.KeyToPath{{Key: "hosts", Path: "/x"}}},
			})
		}, pod + "volumes[1].projected.sources[1].configMap.items[0].path"},
		{"ConfigMap key ../x as a file name", func(js *jobset.JobSet, cm *corev1.ConfigMap) {
			podSpec(js).Volumes[0].ConfigMap.Items = nil
			cm.Data["../x"] = "escape"
		}, "ConfigMap cfg: data[../x]"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewPlan(hostileJobSet(t, tc.change), testOptions())
			if err == nil {
				t.Fatalf("NewPlan accepted it, want %s refused", tc.field)
			}
			if !strings.Contains(err.Error(), tc.field+":") {
				t.Errorf("the error does not name %s:\n%v", tc.field, err)
			}
			if !apierrors.IsInvalid(err) && !strings.HasPrefix(tc.field, "ConfigMap") {
				t.Errorf("the error is not an Invalid one (the CLI's exit 2): %v", err)
			}
		})
	}
	if _, err := NewPlan(hostileJobSet(t, nil), testOptions()); err != nil {
		t.Errorf("the valid JobSet is refused: %v", err)
	}
}

// TestRunWritesOnlyInItsWorkdir: symlinks placed in the workdir (by a step of an earlier run,
// say) that point outside it do not lead the run's writes out: volume files, logs and the
// record are refused there; a symlink within the workdir still works.
func TestRunWritesOnlyInItsWorkdir(t *testing.T) {
	cases := []struct {
		name    string
		link    string // in the workdir
		outside bool   // the link points outside the workdir
		file    bool   // the link's target is a file
		wantErr string
	}{
		{name: "volume folder", link: "volumes/config", outside: true, wantErr: "escapes"},
		{name: "volume file", link: "volumes/config/etc/hosts", outside: true, file: true, wantErr: "escapes"},
		{name: "volume file's folder", link: "volumes/config/etc", outside: true, wantErr: "escapes"},
		{name: "logs folder", link: "logs", outside: true, wantErr: "escapes"},
		{name: "log file", link: "logs/node-0.log", outside: true, file: true, wantErr: "escapes"},
		{name: "record's temporary file", link: RecordFile + ".tmp", outside: true, file: true, wantErr: "escapes"},
		{name: "volume folder within the workdir", link: "volumes/config"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			workdir, outside := t.TempDir(), t.TempDir()
			// os.Root follows relative links only: one within the workdir is written as such.
			target, linkTo := filepath.Join(workdir, "shared"), filepath.Join("..", "shared")
			if tc.outside {
				target = filepath.Join(outside, "target")
				linkTo = target
			}
			if tc.file {
				if err := os.WriteFile(target, []byte("untouched"), 0o644); err != nil {
					t.Fatal(err)
				}
			} else if err := os.MkdirAll(target, 0o755); err != nil {
				t.Fatal(err)
			}
			link := filepath.Join(workdir, tc.link)
			if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(linkTo, link); err != nil {
				t.Fatal(err)
			}
			opts := testOptions()
			opts.Workdir = workdir
			plan, err := NewPlan(hostileJobSet(t, nil), opts)
			if err != nil {
				t.Fatal(err)
			}
			_, err = (&Runner{Plan: plan, Dir: workdir}).Run(context.Background())
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Run: %v", err)
				}
				if got, _ := os.ReadFile(filepath.Join(target, "etc", "hosts")); string(got) != "127.0.0.1" {
					t.Errorf("the file through the link holds %q, want the ConfigMap's", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("Run: %v, want an error saying the path %s", err, tc.wantErr)
			}
			if diff := cmp.Diff(outsideTree(tc.file), listTree(t, outside)); diff != "" {
				t.Errorf("the run wrote outside its workdir (-want,+got):\n%s", diff)
			}
		})
	}
}

// outsideTree is what the folder outside the workdir holds before the run.
func outsideTree(file bool) map[string]string {
	if file {
		return map[string]string{"target": "untouched"}
	}
	return map[string]string{"target/": ""}
}

func listTree(t *testing.T, root string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			got[rel+"/"] = ""
			return nil
		}
		data, err := os.ReadFile(path)
		got[rel] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}
