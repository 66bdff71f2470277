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

package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
)

func TestGangSize(t *testing.T) {
	info := &Info{PodSets: []PodSet{
		{Name: "init", Replicas: 1, Count: 1, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("2")}},
		{Name: "node", Replicas: 1, Count: 100, SinglePodRequests: corev1.ResourceList{corev1.ResourceCPU: q("500m"), "nvidia.com/gpu": q("8")}},
		{Name: "workers", Replicas: 2, Count: 3},
	}}
	members, resources := info.GangSize()
	if diff := cmp.Diff(int32(107), members); diff != "" {
		t.Errorf("members (-want,+got):\n%s", diff)
	}
	want := corev1.ResourceList{corev1.ResourceCPU: q("52"), "nvidia.com/gpu": q("800")}
	for name, w := range want {
		if got := resources[name]; got.Cmp(w) != 0 {
			t.Errorf("%s = %s, want %s", name, got.String(), w.String())
		}
	}
	if len(resources) != len(want) {
		t.Errorf("resources %v, want only %v", resources, want)
	}
}
