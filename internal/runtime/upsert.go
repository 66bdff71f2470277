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
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// upsert replaces the element of list that is the same as item, or appends item: order is kept,
// so repeated builds produce identical lists.
func upsert[T any](list []T, item T, same func(a, b T) bool) []T {
	if i := slices.IndexFunc(list, func(e T) bool { return same(e, item) }); i >= 0 {
		list[i] = item
		return list
	}
	return append(list, item)
}

// UpsertEnv upserts env vars by name.
func UpsertEnv(list []corev1.EnvVar, env ...corev1.EnvVar) []corev1.EnvVar {
	for _, e := range env {
		list = upsert(list, e, func(a, b corev1.EnvVar) bool { return a.Name == b.Name })
	}
	return list
}

// UpsertPorts upserts ports by containerPort or, when set, name.
func UpsertPorts(list []corev1.ContainerPort, ports ...corev1.ContainerPort) []corev1.ContainerPort {
	for _, p := range ports {
		list = upsert(list, p, func(a, b corev1.ContainerPort) bool {
			return a.ContainerPort == b.ContainerPort || (a.Name != "" && a.Name == b.Name)
		})
	}
	return list
}

// UpsertVolumes upserts volumes by name.
func UpsertVolumes(list []corev1.Volume, volumes ...corev1.Volume) []corev1.Volume {
	for _, v := range volumes {
		list = upsert(list, v, func(a, b corev1.Volume) bool { return a.Name == b.Name })
	}
	return list
}

// UpsertVolumeMounts upserts volume mounts by mountPath: two mounts of one volume at different
// paths are both kept.
func UpsertVolumeMounts(list []corev1.VolumeMount, mounts ...corev1.VolumeMount) []corev1.VolumeMount {
	for _, m := range mounts {
		list = upsert(list, m, func(a, b corev1.VolumeMount) bool { return a.MountPath == b.MountPath })
	}
	return list
}
