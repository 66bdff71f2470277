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
// created pod: a limit without a request counts as the request (the apiserver's defaulting), then
// the larger of the regular containers' sum and each init container's need (sidecars included),
// plus the pod overhead.
func PodRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: withDefaultRequests(spec.InitContainers),
		Containers:     withDefaultRequests(spec.Containers),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
	}}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func withDefaultRequests(in []corev1.Container) []corev1.Container {
	out := make([]corev1.Container, len(in))
	for i := range in {
		out[i] = corev1.Container{Name: in[i].Name, RestartPolicy: in[i].RestartPolicy, Resources: in[i].Resources}
		if len(in[i].Resources.Limits) == 0 {
			continue
		}
		req := in[i].Resources.Requests.DeepCopy()
		if req == nil {
			req = corev1.ResourceList{}
		}
		for name, q := range in[i].Resources.Limits {
			if _, ok := req[name]; !ok {
				req[name] = q.DeepCopy()
			}
		}
		out[i].Resources.Requests = req
	}
	return out
}

func sortedNames(list corev1.ResourceList) []corev1.ResourceName {
	names := make([]corev1.ResourceName, 0, len(list))
	for n := range list {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
