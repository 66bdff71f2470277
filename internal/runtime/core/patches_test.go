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

package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestApplyRuntimePatches(t *testing.T) {
	base := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj().Template.Spec
	podSpec := func(s *jobsetv1alpha2.JobSetSpec, i int) *corev1.PodSpec {
		return &s.ReplicatedJobs[i].Template.Spec.Template.Spec
	}
	cases := map[string]struct {
		patches []trainer.RuntimePatch
		want    func() jobsetv1alpha2.JobSetSpec
		wantErr string
	}{
		"no patches: an equal copy": {
			want: func() jobsetv1alpha2.JobSetSpec { return *base.DeepCopy() },
		},
		"patches merge in list order, later ones winning, job order kept": {
			patches: []trainer.RuntimePatch{
				utiltesting.MakeRuntimePatchWrapper("a.io/first").
					PodSpec("node", trainer.PodSpecPatch{NodeSelector: map[string]string{"pool": "a", "disk": "ssd"}}).
					PodSpec("dataset-initializer", trainer.PodSpecPatch{ServiceAccountName: ptr.To("data")}).Obj(),
				utiltesting.MakeRuntimePatchWrapper("b.io/second").
					PodSpec("node", trainer.PodSpecPatch{
						NodeSelector: map[string]string{"pool": "b"},
						Containers: []trainer.ContainerPatch{{
							Name:         "node",
							VolumeMounts: []corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}},
						}},
						Volumes:     []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}},
						Tolerations: []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}},
					}).Obj(),
			},
			want: func() jobsetv1alpha2.JobSetSpec {
				s := *base.DeepCopy()
				podSpec(&s, 0).ServiceAccountName = "data"
				node := podSpec(&s, 2)
				node.NodeSelector = map[string]string{"pool": "b", "disk": "ssd"}
				// A strategic merge patch puts the items it adds before the existing ones.
				node.Containers[0].VolumeMounts = append([]corev1.VolumeMount{{Name: "scratch", MountPath: "/scratch"}}, node.Containers[0].VolumeMounts...)
				node.Volumes = append([]corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}, node.Volumes...)
				node.Tolerations = []corev1.Toleration{{Key: "gpu", Operator: corev1.TolerationOpExists}}
				return s
			},
		},
		"a patch of an unknown job is an error": {
			patches: []trainer.RuntimePatch{
				utiltesting.MakeRuntimePatchWrapper("a.io/x").PodSpec("workers", trainer.PodSpecPatch{}).Obj(),
			},
			wantErr: `runtime patch of manager "a.io/x": replicated job "workers" does not exist in the runtime`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := applyRuntimePatches(&base, tc.patches)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want(), *got); diff != "" {
				t.Errorf("patched spec (-want,+got):\n%s", diff)
			}
			if &got.ReplicatedJobs[0] == &base.ReplicatedJobs[0] {
				t.Error("the result shares the runtime's replicated jobs")
			}
		})
	}
}
