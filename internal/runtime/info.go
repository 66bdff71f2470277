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

// Package runtime holds the model the plugin pipeline works on: Info, the runtime's JobSet template
// after patches, and one PodSet per replicated job. Plugins change PodSets; the JobSet builder
// writes them back into the template.
package runtime

import (
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Info is everything the plugins know about one TrainJob and its runtime. It is built by core
// from objects already read, so plugins never talk to the API server.
type Info struct {
	// RuntimeName is the name of the runtime the TrainJob references.
	RuntimeName string

	// RuntimeSpec is the runtime's spec as written, before any patch; read-only.
	RuntimeSpec *trainer.TrainingRuntimeSpec

	// Labels and Annotations go on the JobSet object: the runtime template's metadata, then each
	// runtime patch's, later ones winning.
	Labels      map[string]string
	Annotations map[string]string

	// RuntimePolicy is the runtime's ML and gang-scheduling policy.
	RuntimePolicy Policy

	// Scheduler holds labels and annotations every pod template receives.
	Scheduler Scheduler

	// Template is the runtime's JobSet spec with the runtime patches applied and
	// resourcesPerNode merged. Plugins change pods through PodSets, not through Template.
	Template *jobsetv1alpha2.JobSetSpec

	// PodSets has one entry per replicated job, in template order.
	PodSets []PodSet

	// Subdomain is the headless Service name pods are reachable under.
	Subdomain string

	// Observed is what the caller read from the cluster for this build or admission.
	Observed Observed

	// Knobs are Gantry's annotations for this TrainJob: its own over its runtime's defaults
	// (internal/knobs).
	Knobs map[string]string

	// Disabled are the optional features the plugins left out of this build (Disable).
	Disabled []DisabledFeature

	// FinalPodSets, at admission only, are the PodSets as the build would leave them (after the
	// Enforce points), for checks of the final counts; nil when the build would fail.
	FinalPodSets []PodSet
}

// Policy is the runtime's ML and gang-scheduling policy.
type Policy struct {
	// MLPolicy is the runtime's mlPolicy; nil means none.
	MLPolicy *trainer.MLPolicy
	// PodGroupPolicy is the runtime's podGroupPolicy; nil means none.
	PodGroupPolicy *trainer.PodGroupPolicy
}

// Scheduler holds what every pod template receives.
type Scheduler struct {
	PodLabels      map[string]string
	PodAnnotations map[string]string
}

// PodSet is one replicated job: how many pods run per Job replica, and what their containers get.
type PodSet struct {
	// Name is the replicated job's name.
	Name string
	// Ancestor is the value of trainer.AncestorLabel on the Job template, or "".
	Ancestor string
	// Replicas is the replicated job's replica count.
	Replicas int32
	// Count is the number of pods per Job replica (parallelism and completions).
	Count int32
	// InitContainers and Containers start as the template's and are written back by the builder;
	// containers a plugin appends are added to the pod.
	InitContainers []Container
	Containers     []Container
	// Volumes start as the template's and are written back by the builder.
	Volumes []corev1.Volume
	// Endpoints are the pods' DNS names, filled in by the JobSet plugin.
	Endpoints []string
	// SinglePodRequests are the resources one pod requests, computed as the scheduler does.
	SinglePodRequests corev1.ResourceList
}

// Container is the part of a container the plugins may change.
type Container struct {
	Name         string
	Image        string
	Command      []string
	Args         []string
	Env          []corev1.EnvVar
	EnvFrom      []corev1.EnvFromSource
	Ports        []corev1.ContainerPort
	VolumeMounts []corev1.VolumeMount
	// Resources are the container's resources; read-only for plugins.
	Resources corev1.ResourceRequirements
}

// NumNodes is the runtime's default node count: mlPolicy.numNodes, or 1.
func (p Policy) NumNodes() int32 {
	if p.MLPolicy != nil && p.MLPolicy.NumNodes != nil {
		return *p.MLPolicy.NumNodes
	}
	return 1
}

// PodSetByName returns the PodSet of replicated job name, or nil.
func (i *Info) PodSetByName(name string) *PodSet {
	for k := range i.PodSets {
		if i.PodSets[k].Name == name {
			return &i.PodSets[k]
		}
	}
	return nil
}

// PodSetByAncestor returns the first PodSet labelled with ancestor, or nil.
func (i *Info) PodSetByAncestor(ancestor string) *PodSet {
	for k := range i.PodSets {
		if i.PodSets[k].Ancestor == ancestor {
			return &i.PodSets[k]
		}
	}
	return nil
}

// TrainerContainer returns the "node" container of the trainer PodSet, or nil.
func (i *Info) TrainerContainer() *Container {
	ps := i.PodSetByAncestor(AncestorTrainer)
	if ps == nil {
		return nil
	}
	return ps.Container(NodeContainer)
}

// TrainerNode returns the trainer PodSet and its node container, or an error naming what the
// runtime lacks.
func (i *Info) TrainerNode() (*PodSet, *Container, error) {
	ps := i.PodSetByAncestor(AncestorTrainer)
	if ps == nil {
		return nil, nil, fmt.Errorf("the runtime has no replicated job labelled %s=%s", trainer.AncestorLabel, AncestorTrainer)
	}
	node := ps.Container(NodeContainer)
	if node == nil {
		return nil, nil, fmt.Errorf("replicated job %q has no %q container", ps.Name, NodeContainer)
	}
	return ps, node, nil
}

// Endpoint is the DNS name of pod podIdx of replica replicaIdx of replicated job rjob.
func (i *Info) Endpoint(jobSetName, rjob string, replicaIdx, podIdx int32) string {
	// Concatenation, not Sprintf: a 1,000-node job computes 1,000 of these per build.
	return jobSetName + "-" + rjob + "-" + strconv.Itoa(int(replicaIdx)) + "-" + strconv.Itoa(int(podIdx)) + "." + i.Subdomain
}

// Container returns the container called name, regular containers first, then init
// containers; nil when there is none.
func (ps *PodSet) Container(name string) *Container {
	for k := range ps.Containers {
		if ps.Containers[k].Name == name {
			return &ps.Containers[k]
		}
	}
	for k := range ps.InitContainers {
		if ps.InitContainers[k].Name == name {
			return &ps.InitContainers[k]
		}
	}
	return nil
}

// NumGPU returns the GPU count of resources: the first resource whose name contains "gpu"
// (case-insensitive), in requests, then in limits; 0 without one.
func NumGPU(r corev1.ResourceRequirements) int64 {
	for _, list := range []corev1.ResourceList{r.Requests, r.Limits} {
		for _, name := range sortedNames(list) {
			if strings.Contains(strings.ToLower(string(name)), "gpu") {
				q := list[name]
				return q.Value()
			}
		}
	}
	return 0
}

// DisabledFeature is an optional feature left out of a build, and why: the TrainJob runs
// without it.
type DisabledFeature struct {
	Name    string
	Message string
}

// Disable records that the optional feature name is left out of this build.
func (i *Info) Disable(name, message string) {
	i.Disabled = append(i.Disabled, DisabledFeature{Name: name, Message: message})
}
