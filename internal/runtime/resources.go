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
	resourcehelper "k8s.io/component-helpers/resource"
)

// MergeResources merges src into dst per resource name: a limit or request src sets replaces
// dst's for that resource only, and claims are upserted by name. This is how a TrainJob's
// resourcesPerNode lands on the runtime's node container.
func MergeResources(dst *corev1.ResourceRequirements, src corev1.ResourceRequirements) {
	if len(src.Limits) > 0 && dst.Limits == nil {
		dst.Limits = corev1.ResourceList{}
	}
	for name, q := range src.Limits {
		dst.Limits[name] = q.DeepCopy()
	}
	if len(src.Requests) > 0 && dst.Requests == nil {
		dst.Requests = corev1.ResourceList{}
	}
	for name, q := range src.Requests {
		dst.Requests[name] = q.DeepCopy()
	}
	for _, c := range src.Claims {
		if i := slices.IndexFunc(dst.Claims, func(d corev1.ResourceClaim) bool { return d.Name == c.Name }); i >= 0 {
			dst.Claims[i] = c
		} else {
			dst.Claims = append(dst.Claims, c)
		}
	}
}

// PodRequests are the resources one pod of spec requests, computed as the scheduler does on the
// created pod: LimitRange defaults fill in missing requests and limits, a limit without a request
// counts as the request, and the RuntimeClass overhead is set (the apiserver's admission and
// defaulting); then the larger of the regular containers' sum and each init container's need
// (sidecars included), plus the overhead. obs may be nil.
func PodRequests(spec *corev1.PodSpec, obs *Observed) corev1.ResourceList {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: withDefaultRequests(spec.InitContainers, obs),
		Containers:     withDefaultRequests(spec.Containers, obs),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
	}}
	if pod.Spec.Overhead == nil && obs != nil && spec.RuntimeClassName != nil {
		if rc := obs.RuntimeClasses[*spec.RuntimeClassName]; rc != nil && rc.Overhead != nil {
			pod.Spec.Overhead = rc.Overhead.PodFixed
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func withDefaultRequests(in []corev1.Container, obs *Observed) []corev1.Container {
	out := make([]corev1.Container, len(in))
	for i := range in {
		res := *in[i].Resources.DeepCopy()
		if obs != nil {
			applyLimitRangeDefaults(&res, obs.LimitRanges)
		}
		for name, q := range res.Limits {
			if res.Requests == nil {
				res.Requests = corev1.ResourceList{}
			}
			if _, ok := res.Requests[name]; !ok {
				res.Requests[name] = q.DeepCopy()
			}
		}
		out[i] = corev1.Container{Name: in[i].Name, RestartPolicy: in[i].RestartPolicy, Resources: res}
	}
	return out
}

// applyLimitRangeDefaults fills in what the LimitRanger admission plugin would: a container's
// missing limits from `default`, missing requests from `defaultRequest`.
func applyLimitRangeDefaults(res *corev1.ResourceRequirements, ranges []corev1.LimitRange) {
	for _, lr := range ranges {
		for _, item := range lr.Spec.Limits {
			if item.Type != corev1.LimitTypeContainer {
				continue
			}
			res.Limits = fillMissing(res.Limits, item.Default)
			res.Requests = fillMissing(res.Requests, item.DefaultRequest)
		}
	}
}

func fillMissing(dst, defaults corev1.ResourceList) corev1.ResourceList {
	for name, q := range defaults {
		if dst == nil {
			dst = corev1.ResourceList{}
		}
		if _, ok := dst[name]; !ok {
			dst[name] = q.DeepCopy()
		}
	}
	return dst
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
