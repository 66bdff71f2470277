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
	"maps"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// NewInfo builds the Info of tj over the runtime spec: metadata merged, runtime patches applied,
// resourcesPerNode merged, PodSets built and the TrainJob's trainer and initializer settings laid
// over their containers. obs (nil when nothing was read) is what the cluster provides: what it
// adds to pods (LimitRange defaults, RuntimeClass overhead), so pod requests and the gang sizes
// built from them match the created pods, and what the plugins check or copy. It reads nothing
// from the API server.
func NewInfo(tj *trainer.TrainJob, runtimeName string, spec *trainer.TrainingRuntimeSpec, obs *runtime.Observed) (*runtime.Info, error) {
	template, err := applyRuntimePatches(&spec.Template.Spec, tj.Spec.RuntimePatches)
	if err != nil {
		return nil, err
	}
	info := &runtime.Info{
		RuntimeName: runtimeName,
		RuntimeSpec: spec,
		Labels:      maps.Clone(spec.Template.Metadata.Labels),
		Annotations: maps.Clone(spec.Template.Metadata.Annotations),
		RuntimePolicy: runtime.Policy{
			MLPolicy:       spec.MLPolicy,
			PodGroupPolicy: spec.PodGroupPolicy,
		},
		Scheduler: runtime.Scheduler{PodLabels: map[string]string{}, PodAnnotations: map[string]string{}},
		Template:  template,
		Subdomain: tj.Name,
	}
	if obs != nil {
		info.Observed = *obs
	}
	if template.Network != nil && template.Network.Subdomain != "" {
		info.Subdomain = template.Network.Subdomain
	}
	for _, p := range tj.Spec.RuntimePatches {
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Metadata == nil {
			continue
		}
		info.Labels = mergeMap(info.Labels, p.TrainingRuntimeSpec.Template.Metadata.Labels)
		info.Annotations = mergeMap(info.Annotations, p.TrainingRuntimeSpec.Template.Metadata.Annotations)
	}
	mergeResourcesPerNode(info, tj)
	info.PodSets = newPodSets(template, info.RuntimePolicy, obs)
	applyTrainer(info, tj)
	applyInitializers(info, tj)
	return info, nil
}

func mergeMap(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = map[string]string{}
	}
	maps.Copy(dst, src)
	return dst
}

// mergeResourcesPerNode merges trainer.resourcesPerNode into the trainer job's node container,
// and into the job named node when the MPI launcher is itself a node. It works on the template,
// before PodSets exist, so pod requests and gang sizes see the result.
func mergeResourcesPerNode(info *runtime.Info, tj *trainer.TrainJob) {
	if tj.Spec.Trainer == nil || tj.Spec.Trainer.ResourcesPerNode == nil {
		return
	}
	for i := range info.Template.ReplicatedJobs {
		rj := &info.Template.ReplicatedJobs[i]
		mpiNode := launcherIsNode(info.RuntimePolicy) && rj.Name == runtime.NodeJob
		if !runtime.IsTrainerJob(rj) && !mpiNode {
			continue
		}
		for c := range rj.Template.Spec.Template.Spec.Containers {
			if ctr := &rj.Template.Spec.Template.Spec.Containers[c]; ctr.Name == runtime.NodeContainer {
				runtime.MergeResources(&ctr.Resources, *tj.Spec.Trainer.ResourcesPerNode)
			}
		}
	}
}

func launcherIsNode(p runtime.Policy) bool {
	return p.MLPolicy != nil && p.MLPolicy.MPI != nil && ptr.Deref(p.MLPolicy.MPI.RunLauncherAsNode, false)
}

// newPodSets builds one PodSet per replicated job, in template order.
func newPodSets(template *jobsetv1alpha2.JobSetSpec, policy runtime.Policy, obs *runtime.Observed) []runtime.PodSet {
	podSets := make([]runtime.PodSet, 0, len(template.ReplicatedJobs))
	for i := range template.ReplicatedJobs {
		rj := &template.ReplicatedJobs[i]
		pod := &rj.Template.Spec.Template.Spec
		ps := runtime.PodSet{
			Name:              rj.Name,
			Ancestor:          rj.Template.Labels[trainer.AncestorLabel],
			Replicas:          rj.Replicas,
			Count:             podCount(rj, policy),
			InitContainers:    containers(pod.InitContainers),
			Containers:        containers(pod.Containers),
			Volumes:           append([]corev1.Volume(nil), pod.Volumes...),
			SinglePodRequests: runtime.PodRequests(pod, obs),
		}
		if ps.Ancestor != "" {
			// A step the TrainJob overrides always runs as a single Job.
			ps.Replicas = 1
		}
		podSets = append(podSets, ps)
	}
	return podSets
}

// podCount is the runtime's node count for the trainer job, else the Job's parallelism; at
// least 1.
func podCount(rj *jobsetv1alpha2.ReplicatedJob, policy runtime.Policy) int32 {
	count := ptr.Deref(rj.Template.Spec.Parallelism, 1)
	if runtime.IsTrainerJob(rj) && policy.MLPolicy != nil {
		count = policy.NumNodes()
	}
	return max(count, 1)
}

func containers(in []corev1.Container) []runtime.Container {
	out := make([]runtime.Container, 0, len(in))
	for i := range in {
		c := &in[i]
		out = append(out, runtime.Container{
			Name:         c.Name,
			Image:        c.Image,
			Command:      c.Command,
			Args:         c.Args,
			Env:          append([]corev1.EnvVar(nil), c.Env...),
			EnvFrom:      append([]corev1.EnvFromSource(nil), c.EnvFrom...),
			Ports:        append([]corev1.ContainerPort(nil), c.Ports...),
			VolumeMounts: append([]corev1.VolumeMount(nil), c.VolumeMounts...),
			Resources:    c.Resources,
		})
	}
	return out
}

// applyTrainer lays spec.trainer over the trainer job's node container (and over the node job's
// when the MPI launcher is a node): image, command and args replace, env is upserted.
func applyTrainer(info *runtime.Info, tj *trainer.TrainJob) {
	t := tj.Spec.Trainer
	if t == nil {
		return
	}
	targets := []*runtime.Container{info.TrainerContainer()}
	if launcherIsNode(info.RuntimePolicy) {
		if ps := info.PodSetByName(runtime.NodeJob); ps != nil && ps.Ancestor != trainer.AncestorTrainer {
			targets = append(targets, ps.Container(runtime.NodeContainer))
		}
	}
	for i, c := range targets {
		if c == nil {
			continue
		}
		if i == 0 {
			// Image, command and args belong to the trainer step only; the MPI node job keeps
			// running its own command (sshd).
			if t.Image != nil {
				c.Image = *t.Image
			}
			if t.Command != nil {
				c.Command = t.Command
			}
			if t.Args != nil {
				c.Args = t.Args
			}
		}
		c.Env = runtime.UpsertEnv(c.Env, t.Env...)
	}
}

// StorageURIEnv is the variable the initializers read their source from.
const StorageURIEnv = "STORAGE_URI"

// applyInitializers lays spec.initializer over the initializer containers: STORAGE_URI, then env,
// then the Secret as envFrom.
func applyInitializers(info *runtime.Info, tj *trainer.TrainJob) {
	if tj.Spec.Initializer == nil {
		return
	}
	if d := tj.Spec.Initializer.Dataset; d != nil {
		applyInitializer(info, trainer.AncestorDatasetInitializer, d.StorageUri, d.Env, d.SecretRef)
	}
	if m := tj.Spec.Initializer.Model; m != nil {
		applyInitializer(info, trainer.AncestorModelInitializer, m.StorageUri, m.Env, m.SecretRef)
	}
}

func applyInitializer(info *runtime.Info, ancestor string, uri *string, env []corev1.EnvVar, secret *corev1.LocalObjectReference) {
	ps := info.PodSetByAncestor(ancestor)
	if ps == nil {
		return
	}
	c := ps.Container(ancestor)
	if c == nil {
		return
	}
	if uri != nil {
		c.Env = runtime.UpsertEnv(c.Env, corev1.EnvVar{Name: StorageURIEnv, Value: *uri})
	}
	c.Env = runtime.UpsertEnv(c.Env, env...)
	if secret != nil {
		c.EnvFrom = append(c.EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: *secret}})
	}
}
