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
	nodev1 "k8s.io/api/node/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
)

func q(s string) resource.Quantity { return resource.MustParse(s) }

func TestUpsert(t *testing.T) {
	env := UpsertEnv([]corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "1"}},
		corev1.EnvVar{Name: "B", Value: "2"}, corev1.EnvVar{Name: "C", Value: "3"})
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "A", Value: "1"}, {Name: "B", Value: "2"}, {Name: "C", Value: "3"}}, env); diff != "" {
		t.Errorf("UpsertEnv (-want,+got):\n%s", diff)
	}
	ports := UpsertPorts([]corev1.ContainerPort{{Name: "http", ContainerPort: 80}, {ContainerPort: 29500}},
		corev1.ContainerPort{Name: "http", ContainerPort: 8080}, corev1.ContainerPort{ContainerPort: 29500, Protocol: corev1.ProtocolTCP})
	wantPorts := []corev1.ContainerPort{{Name: "http", ContainerPort: 8080}, {ContainerPort: 29500, Protocol: corev1.ProtocolTCP}}
	if diff := cmp.Diff(wantPorts, ports); diff != "" {
		t.Errorf("UpsertPorts (-want,+got):\n%s", diff)
	}
	mounts := UpsertVolumeMounts([]corev1.VolumeMount{{Name: "v", MountPath: "/a"}},
		corev1.VolumeMount{Name: "v", MountPath: "/b"}, corev1.VolumeMount{Name: "w", MountPath: "/a"})
	if diff := cmp.Diff([]corev1.VolumeMount{{Name: "w", MountPath: "/a"}, {Name: "v", MountPath: "/b"}}, mounts); diff != "" {
		t.Errorf("UpsertVolumeMounts is keyed by mountPath (-want,+got):\n%s", diff)
	}
}

func TestNumGPU(t *testing.T) {
	cases := map[string]struct {
		res  corev1.ResourceRequirements
		want int64
	}{
		"none":             {},
		"limits only":      {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q("4")}}, want: 4},
		"requests first":   {res: corev1.ResourceRequirements{Requests: corev1.ResourceList{"amd.com/gpu": q("2")}, Limits: corev1.ResourceList{"nvidia.com/gpu": q("4")}}, want: 2},
		"case-insensitive": {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{"example.com/GPU": q("1")}}, want: 1},
		"cpu is not a gpu": {res: corev1.ResourceRequirements{Limits: corev1.ResourceList{corev1.ResourceCPU: q("8")}}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, NumGPU(tc.res)); diff != "" {
				t.Errorf("NumGPU (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestPodRequests(t *testing.T) {
	spec := &corev1.PodSpec{
		InitContainers: []corev1.Container{
			{Name: "init", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("6")}}},
			{Name: "sidecar", RestartPolicy: ptr.To(corev1.ContainerRestartPolicyAlways),
				Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("1")}}},
		},
		Containers: []corev1.Container{
			{Name: "node", Resources: corev1.ResourceRequirements{
				Requests: corev1.ResourceList{corev1.ResourceCPU: q("2")},
				Limits:   corev1.ResourceList{"nvidia.com/gpu": q("8"), corev1.ResourceCPU: q("4")},
			}},
			{Name: "agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceMemory: q("1Gi")}}},
		},
		Overhead: corev1.ResourceList{corev1.ResourceMemory: q("100Mi")},
	}
	// cpu: max(init 6, sidecar 1 + containers 2) = 6; gpu from the limit; memory 1Gi + overhead.
	want := corev1.ResourceList{corev1.ResourceCPU: q("6"), "nvidia.com/gpu": q("8"), corev1.ResourceMemory: q("1124Mi")}
	if diff := cmp.Diff(want, PodRequests(spec, nil), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodRequests (-want,+got):\n%s", diff)
	}
	if _, ok := spec.Containers[0].Resources.Requests["nvidia.com/gpu"]; ok {
		t.Error("PodRequests changed the spec")
	}
}

func TestPodRequestsWithObserved(t *testing.T) {
	spec := &corev1.PodSpec{
		RuntimeClassName: ptr.To("kata"),
		Containers: []corev1.Container{
			{Name: "node", Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": q("1")}}},
			{Name: "agent", Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: q("100m")}}},
		},
	}
	obs := &Observed{
		LimitRanges: []corev1.LimitRange{{Spec: corev1.LimitRangeSpec{Limits: []corev1.LimitRangeItem{
			{Type: corev1.LimitTypePod, DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("9")}},
			{Type: corev1.LimitTypeContainer,
				Default:        corev1.ResourceList{corev1.ResourceMemory: q("2Gi")},
				DefaultRequest: corev1.ResourceList{corev1.ResourceCPU: q("500m"), corev1.ResourceMemory: q("1Gi")}},
		}}}},
		RuntimeClasses: map[string]*nodev1.RuntimeClass{"kata": {Overhead: &nodev1.Overhead{PodFixed: corev1.ResourceList{corev1.ResourceCPU: q("250m")}}}},
	}
	// cpu: node 500m (defaultRequest) + agent 100m (its own) + 250m overhead; memory: 1Gi each
	// (defaultRequest wins over the default limit for requests); the GPU limit counts as requested.
	want := corev1.ResourceList{corev1.ResourceCPU: q("850m"), corev1.ResourceMemory: q("2Gi"), "nvidia.com/gpu": q("1")}
	if diff := cmp.Diff(want, PodRequests(spec, obs), cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodRequests (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(corev1.ResourceList{corev1.ResourceCPU: q("100m")}, PodRequests(&corev1.PodSpec{Containers: spec.Containers[1:]}, nil),
		cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodRequests without an environment (-want,+got):\n%s", diff)
	}
}
