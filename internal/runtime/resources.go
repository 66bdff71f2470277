package runtime

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
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

// Environment is what the cluster provides that the pipeline must know: what it adds to a pod at
// admission, read only for runtimes with a pod group policy (to size gangs right), and the status
// server's CA, read only when the TrainJobStatus plugin runs. The controller reads it before
// building, so plugins stay pure.
type Environment struct {
	// LimitRanges of the TrainJob's namespace: their container defaults fill in missing requests.
	LimitRanges []corev1.LimitRange
	// RuntimeClasses by name: their pod overhead is added to pods that use them.
	RuntimeClasses map[string]*nodev1.RuntimeClass
	// StatusServerCA is the PEM CA bundle the training pods trust for the status server (the
	// ca.crt of the webhook certificate Secret); empty when not read.
	StatusServerCA string
}

// PodRequests are the resources one pod of spec requests, computed as the scheduler does on the
// created pod: LimitRange defaults fill in missing requests and limits, a limit without a request
// counts as the request, and the RuntimeClass overhead is set (the apiserver's admission and
// defaulting); then the larger of the regular containers' sum and each init container's need
// (sidecars included), plus the overhead. env may be nil.
func PodRequests(spec *corev1.PodSpec, env *Environment) corev1.ResourceList {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		InitContainers: withDefaultRequests(spec.InitContainers, env),
		Containers:     withDefaultRequests(spec.Containers, env),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
	}}
	if pod.Spec.Overhead == nil && env != nil && spec.RuntimeClassName != nil {
		if rc := env.RuntimeClasses[*spec.RuntimeClassName]; rc != nil && rc.Overhead != nil {
			pod.Spec.Overhead = rc.Overhead.PodFixed
		}
	}
	return resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
}

func withDefaultRequests(in []corev1.Container, env *Environment) []corev1.Container {
	out := make([]corev1.Container, len(in))
	for i := range in {
		res := *in[i].Resources.DeepCopy()
		if env != nil {
			applyLimitRangeDefaults(&res, env.LimitRanges)
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
