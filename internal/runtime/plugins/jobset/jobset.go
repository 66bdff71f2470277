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

// Package jobset is the template owner: it computes endpoints and parallelism, builds the JobSet
// from the PodSets, validates the runtime-facing parts of a TrainJob and mirrors JobSet status.
package jobset

import (
	"context"
	"fmt"
	"maps"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "JobSet"

// JobSet builds the TrainJob's JobSet.
type JobSet struct{}

var (
	_ framework.PreComponentBuilderPlugin = (*JobSet)(nil)
	_ framework.ComponentBuilderPlugin    = (*JobSet)(nil)
	_ framework.CustomValidationPlugin    = (*JobSet)(nil)
	_ framework.TrainJobStatusPlugin      = (*JobSet)(nil)
)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &JobSet{}, nil
}

// Name returns the plugin name.
func (*JobSet) Name() string { return Name }

// PreBuildSync fills every PodSet's endpoints, "<trainjob>-<job>-<replica>-<pod>.<subdomain>", and
// writes its count into the replicated job's parallelism and completions.
func (*JobSet) PreBuildSync(info *runtime.Info, tj *trainer.TrainJob) error {
	if err := checkSizes(info.PodSets); err != nil {
		return err
	}
	for i := range info.PodSets {
		ps := &info.PodSets[i]
		ps.Endpoints = make([]string, 0, int(ps.Replicas)*int(ps.Count))
		for r := range ps.Replicas {
			for p := range ps.Count {
				ps.Endpoints = append(ps.Endpoints, info.Endpoint(tj.Name, ps.Name, r, p))
			}
		}
	}
	return nil
}

// MaxPodsPerJob is the most pods one Indexed Job may run (its completions limit); a larger count
// could never start, so it is refused before anything is built for it.
const MaxPodsPerJob = core.MaxPodsPerJob

// maxPods bounds the pods of all the replicated jobs together. Each pod gets an endpoint on every
// admission and every build, whether a plugin reads it or not (only MPI's hostfile does): a
// million take 0.2-0.4 s and 40-130 MiB (the longest names), where a runtime of 50 jobs of 10
// Jobs of 100,000 pods took 5 s and 2 GiB. Kubeflow Trainer computes its endpoints lazily and
// would create such a JobSet, but no cluster runs a million pods (Kubernetes is tested to
// 150,000).
const maxPods = 1_000_000

func checkSizes(podSets []runtime.PodSet) error {
	var all int64
	for i := range podSets {
		if err := checkSize(&podSets[i]); err != nil {
			return err
		}
		all += int64(podSets[i].Replicas) * int64(podSets[i].Count)
	}
	if all > maxPods {
		return fmt.Errorf("the replicated jobs would run %d pods in all; the limit is %d", all, maxPods)
	}
	return nil
}

func checkSize(ps *runtime.PodSet) error {
	if ps.Count < 0 || ps.Replicas < 0 {
		// A runtime admitted without validation; runtime validation refuses it.
		return fmt.Errorf("replicated job %q has a negative count (%d replicas of %d pods)", ps.Name, ps.Replicas, ps.Count)
	}
	if ps.Count > MaxPodsPerJob {
		return fmt.Errorf("replicated job %q would run %d pods per Job; an Indexed Job runs at most %d", ps.Name, ps.Count, MaxPodsPerJob)
	}
	if pods := int64(ps.Replicas) * int64(ps.Count); pods > maxPods {
		return fmt.Errorf("replicated job %q would run %d pods (%d replicas of %d); the limit is %d",
			ps.Name, pods, ps.Replicas, ps.Count, maxPods)
	}
	return nil
}

// Build returns the JobSet. A running JobSet is never changed: the controller applies it only
// while the TrainJob or the JobSet is suspended, or when it does not exist yet.
func (*JobSet) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	spec := info.Template.DeepCopy()
	if len(spec.ReplicatedJobs) < len(info.PodSets) {
		return nil, fmt.Errorf("the runtime template has %d replicated jobs for %d PodSets", len(spec.ReplicatedJobs), len(info.PodSets))
	}
	for i := range info.PodSets {
		ps := &info.PodSets[i]
		rj := &spec.ReplicatedJobs[i]
		if rj.Name != ps.Name {
			return nil, fmt.Errorf("PodSet %q does not match replicated job %q", ps.Name, rj.Name)
		}
		rj.Replicas = ps.Replicas
		rj.Template.Spec.Parallelism = ptr.To(ps.Count)
		rj.Template.Spec.Completions = ptr.To(ps.Count)
		tmpl := &rj.Template.Spec.Template
		tmpl.Labels = mergeMap(tmpl.Labels, info.Scheduler.PodLabels)
		tmpl.Annotations = mergeMap(tmpl.Annotations, info.Scheduler.PodAnnotations)
		pod := &tmpl.Spec
		pod.Volumes = ps.Volumes
		writeContainers(pod.Containers, ps.Containers)
		writeContainers(pod.InitContainers, ps.InitContainers)
		pod.InitContainers = appendNewContainers(pod.InitContainers, ps.InitContainers)
	}
	spec.Suspend = tj.Spec.Suspend
	js := &jobsetv1alpha2.JobSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: jobsetv1alpha2.GroupVersion.String(), Kind: "JobSet"},
		ObjectMeta: ownedMeta(tj, info),
		Spec:       *spec,
	}
	return []apply.Desired{{Object: js, Mode: apply.UnlessRunning}}, nil
}

func ownedMeta(tj *trainer.TrainJob, info *runtime.Info) metav1.ObjectMeta {
	meta := runtime.OwnedBy(tj, tj.Name)
	meta.Labels = maps.Clone(info.Labels)
	meta.Annotations = maps.Clone(info.Annotations)
	return meta
}

// writeContainers copies what plugins may change from the PodSet containers into the pod's,
// matched by name (through an index: a runtime may have 100,000 containers).
func writeContainers(dst []corev1.Container, src []runtime.Container) {
	byName := indexByName(src)
	for i := range dst {
		k, ok := byName[dst[i].Name]
		if !ok {
			continue
		}
		c := &src[k]
		dst[i].Image = c.Image
		dst[i].Command = c.Command
		dst[i].Args = c.Args
		dst[i].Env = c.Env
		dst[i].EnvFrom = c.EnvFrom
		dst[i].Ports = c.Ports
		dst[i].VolumeMounts = c.VolumeMounts
	}
}

// appendNewContainers adds the containers plugins created (e.g. Flux's installer).
func appendNewContainers(dst []corev1.Container, src []runtime.Container) []corev1.Container {
	exists := make(map[string]bool, len(dst))
	for i := range dst {
		exists[dst[i].Name] = true
	}
	for _, c := range src {
		if exists[c.Name] {
			continue
		}
		exists[c.Name] = true
		dst = append(dst, corev1.Container{
			Name: c.Name, Image: c.Image, Command: c.Command, Args: c.Args, Env: c.Env, EnvFrom: c.EnvFrom,
			Ports: c.Ports, VolumeMounts: c.VolumeMounts, Resources: c.Resources,
		})
	}
	return dst
}

// indexByName maps each container name to its index; of two same-named containers, the last
// wins.
func indexByName(cs []runtime.Container) map[string]int {
	byName := make(map[string]int, len(cs))
	for i := range cs {
		byName[cs[i].Name] = i
	}
	return byName
}

func mergeMap(dst, src map[string]string) map[string]string {
	if len(src) == 0 {
		return dst
	}
	if dst == nil {
		dst = make(map[string]string, len(src))
	}
	maps.Copy(dst, src)
	return dst
}
