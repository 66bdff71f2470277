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

// Package localrun runs a TrainJob on this machine: the objects the controller would apply
// (internal/render) become a plan of local processes, one per pod, with the few rewrites a
// machine without a cluster needs (pod DNS names, ports, volume paths, the status server), each
// listed; a runner then starts them, keeps their logs and records the run in run.json.
package localrun

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/jobview"
)

// Plan is what a local run starts: its steps in start order, the volumes they share and every
// rewrite of the rendered objects.
type Plan struct {
	TrainJob  string `json:"trainJob"`
	Namespace string `json:"namespace"`
	Workdir   string `json:"workdir"`
	Steps     []Step `json:"steps"`
	// Volumes are the folders standing in for the pods' volumes, by volume name.
	Volumes []Volume `json:"volumes"`
	// Ports maps each container port of the JobSet to the loopback port chosen for this run.
	Ports []PortMapping `json:"ports,omitempty"`
	// Warnings name what the plan ignores (images, init containers, sidecars) or sets that the
	// render does not (torchrun's PET_REDIRECTS and PET_TEE, for torch 1.x under Python 3.11).
	Warnings []string `json:"warnings,omitempty"`
	// Elastic is set for an elastic torch TrainJob (elastic.gantry.dev): its nodes may leave
	// the run while at least MinNodes remain, as torchrun's c10d rendezvous allows.
	Elastic *Elastic `json:"elastic,omitempty"`
}

// Elastic says which steps form an elastic torchrun group.
type Elastic struct {
	ReplicatedJob string `json:"replicatedJob"`
	MinNodes      int    `json:"minNodes"`
}

// Step is one pod of the JobSet, run as a process group.
type Step struct {
	// Name is the step's name as on the cluster (jobview.StepName): node-0, dataset-initializer.
	Name          string   `json:"name"`
	ReplicatedJob string   `json:"replicatedJob"`
	JobIndex      int      `json:"jobIndex"`
	Index         int      `json:"index"`
	Pod           string   `json:"pod"`
	Container     string   `json:"container"`
	Command       []string `json:"command"`
	WorkingDir    string   `json:"workingDir,omitempty"`
	// Env is the container's environment, resolved and rewritten.
	Env []EnvVar `json:"env"`
	// Rewrites lists every value that differs from the render, and why.
	Rewrites []Rewrite `json:"rewrites,omitempty"`
	// After names the replicated jobs that must have completed (or, for Ready, started) first.
	After []Dependency `json:"after,omitempty"`
	// GraceSeconds is how long a stop waits between SIGTERM and SIGKILL.
	GraceSeconds int64 `json:"graceSeconds"`
	// Skip, when set, says why the step is not run (a container without a command: its image's
	// entrypoint is unknown here); it counts as completed.
	Skip string `json:"skip,omitempty"`
}

// EnvVar is one resolved variable.
type EnvVar struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Rewrite is one value of the render changed for this machine.
type Rewrite struct {
	// Where is "env NAME", "command[i]" or "file VOLUME/PATH".
	Where string `json:"where"`
	From  string `json:"from"`
	To    string `json:"to"`
	Why   string `json:"why"`
}

// Dependency is a replicated job a step waits for, and for what: Complete or Ready.
type Dependency struct {
	ReplicatedJob string `json:"replicatedJob"`
	Status        string `json:"status"`
}

// PortMapping is a container port moved to a free loopback port.
type PortMapping struct {
	From int32 `json:"from"`
	To   int32 `json:"to"`
}

// Options are the run's choices that the render does not make.
type Options struct {
	// Workdir holds the volumes, logs and run.json.
	Workdir string
	// FreePort returns a free loopback port; each container port of the JobSet gets one.
	FreePort func() (int32, error)
	// StatusURL replaces the status server URL the render injected (empty: left as is).
	StatusURL string
	// StatusToken is the content of the projected service account token file.
	StatusToken string
	// TorchProbe reports the versions of the interpreter a torchrun step runs (nil: ProbeTorch),
	// for the mend of torch 1.x's torchrun under Python 3.11 (torch.go).
	TorchProbe func(python string) (TorchVersions, error)
	// LookupEnv reads this machine's environment, which the steps inherit (nil: os.LookupEnv).
	LookupEnv func(name string) (string, bool)
}

// Why a value was rewritten, as the plan prints it.
const (
	WhyHost   = "pod DNS name: this machine"
	WhyPort   = "container port: a free loopback port"
	WhyPath   = "volume mount: a folder of the workdir"
	WhyStatus = "status server: the run's own"
	WhyRdzv   = "elastic rendezvous: every node is this machine, so the first node hosts the c10d store"
)

// NewPlan expands the rendered objects into local steps.
func NewPlan(objs []*unstructured.Unstructured, opts Options) (*Plan, error) {
	side, js, err := split(objs)
	if err != nil {
		return nil, err
	}
	// Names and paths of the JobSet become folders and files of the workdir: what the cluster
	// would refuse (a "../" in a name, say) is refused before any is made.
	if err := validate(js); err != nil {
		return nil, err
	}
	p := &Plan{TrainJob: js.Name, Namespace: js.Namespace, Workdir: opts.Workdir}
	order, err := startOrder(js)
	if err != nil {
		return nil, err
	}
	rw, err := newRewriter(js, opts, p)
	if err != nil {
		return nil, err
	}
	for _, rj := range order {
		if err := p.addReplicatedJob(js, rj, side, rw); err != nil {
			return nil, err
		}
	}
	p.fixTorchRedirects(opts)
	if err := p.addVolumes(js, side, rw, opts); err != nil {
		return nil, err
	}
	return p, nil
}

// split finds the JobSet and indexes the ConfigMaps and Secrets it may read.
func split(objs []*unstructured.Unstructured) (*sideObjects, *jobset.JobSet, error) {
	side := &sideObjects{configMaps: map[string]*corev1.ConfigMap{}, secrets: map[string]*corev1.Secret{}}
	var js *jobset.JobSet
	for _, o := range objs {
		switch o.GetKind() {
		case "JobSet":
			js = &jobset.JobSet{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, js); err != nil {
				return nil, nil, fmt.Errorf("reading the rendered JobSet: %w", err)
			}
		case "ConfigMap":
			cm := &corev1.ConfigMap{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, cm); err != nil {
				return nil, nil, fmt.Errorf("reading ConfigMap %s: %w", o.GetName(), err)
			}
			side.configMaps[cm.Name] = cm
		case "Secret":
			s := &corev1.Secret{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, s); err != nil {
				return nil, nil, fmt.Errorf("reading Secret %s: %w", o.GetName(), err)
			}
			side.secrets[s.Name] = s
		}
	}
	if js == nil {
		return nil, nil, fmt.Errorf("the render has no JobSet")
	}
	return side, js, nil
}

// startOrder is the replicated jobs in an order that honours dependsOn: each after the jobs it
// depends on (JobSet only lets a job depend on earlier ones, so this is the spec's order when
// the JobSet is valid).
func startOrder(js *jobset.JobSet) ([]*jobset.ReplicatedJob, error) {
	var order []*jobset.ReplicatedJob
	placed := map[string]bool{}
	for len(order) < len(js.Spec.ReplicatedJobs) {
		progress := false
		for i := range js.Spec.ReplicatedJobs {
			rj := &js.Spec.ReplicatedJobs[i]
			if placed[rj.Name] || slices.ContainsFunc(rj.DependsOn, func(d jobset.DependsOn) bool { return !placed[d.Name] }) {
				continue
			}
			order, placed[rj.Name], progress = append(order, rj), true, true
		}
		if !progress {
			return nil, fmt.Errorf("the JobSet's dependsOn has a cycle or names an absent replicated job")
		}
	}
	return order, nil
}

// addReplicatedJob adds one step per pod of rj: replicas Jobs of completions indexes each.
func (p *Plan) addReplicatedJob(js *jobset.JobSet, rj *jobset.ReplicatedJob, side *sideObjects, rw *rewriter) error {
	tmpl := rj.Template.Spec.Template
	if len(tmpl.Spec.Containers) == 0 {
		return fmt.Errorf("replicated job %q has no container", rj.Name)
	}
	main := tmpl.Spec.Containers[0]
	for _, c := range tmpl.Spec.Containers[1:] {
		p.warnf("replicated job %q: container %q is not run (only the first container, %q, is)", rj.Name, c.Name, main.Name)
	}
	for _, c := range tmpl.Spec.InitContainers {
		p.warnf("replicated job %q: init container %q is not run", rj.Name, c.Name)
	}
	for _, c := range tmpl.Spec.Containers {
		if c.Image != "" && !slices.Contains(p.Warnings, imageWarning(c.Image)) {
			p.Warnings = append(p.Warnings, imageWarning(c.Image))
		}
	}
	skip := ""
	if len(main.Command) == 0 {
		skip = fmt.Sprintf("container %q has no command, and its image's entrypoint (%s) is not run here: the step counts as done", main.Name, main.Image)
		p.warnf("replicated job %q: %s", rj.Name, skip)
	}
	completions := int(ptr.Deref(rj.Template.Spec.Completions, ptr.Deref(rj.Template.Spec.Parallelism, 1)))
	var after []Dependency
	for _, d := range rj.DependsOn {
		after = append(after, Dependency{ReplicatedJob: d.Name, Status: string(d.Status)})
	}
	grace := ptr.Deref(tmpl.Spec.TerminationGracePeriodSeconds, corev1.DefaultTerminationGracePeriodSeconds)
	for j := range int(rj.Replicas) {
		for i := range completions {
			pod := podMeta(js, rj, j, i)
			name, _ := jobview.StepName(&corev1.Pod{ObjectMeta: pod})
			s := Step{
				Name: name, ReplicatedJob: rj.Name, JobIndex: j, Index: i, Pod: pod.Name, Container: main.Name,
				After: after, GraceSeconds: grace, Skip: skip,
			}
			env, err := resolveEnv(&main, &tmpl, pod, side)
			if err != nil {
				return fmt.Errorf("step %s: %w", name, err)
			}
			s.Env, s.Command, s.WorkingDir = rw.env(&s, env, &main), rw.command(&s, expandAll(append(slices.Clone(main.Command), main.Args...), env), &main), rw.path(&s, "workingDir", main.WorkingDir, &main)
			p.Steps = append(p.Steps, s)
			if minNodes, ok := elasticMin(env); ok {
				if p.Elastic == nil {
					p.Elastic = &Elastic{ReplicatedJob: rj.Name, MinNodes: minNodes}
				}
				hostRendezvous(&p.Steps[len(p.Steps)-1], j == 0 && i == 0)
			}
		}
	}
	return nil
}

func imageWarning(image string) string {
	return fmt.Sprintf("image %s is not used: the command runs on this machine", image)
}

func (p *Plan) warnf(format string, args ...any) {
	p.Warnings = append(p.Warnings, fmt.Sprintf(format, args...))
}

// podMeta is the metadata the pod j/i of rj would have: its name (a fixed suffix stands for the
// random one), the template's labels and annotations, and the JobSet's and Job's labels.
func podMeta(js *jobset.JobSet, rj *jobset.ReplicatedJob, j, i int) metav1.ObjectMeta {
	tmpl := rj.Template.Spec.Template
	labels := maps.Clone(tmpl.Labels)
	if labels == nil {
		labels = map[string]string{}
	}
	labels[jobset.JobSetNameKey] = js.Name
	labels[jobset.ReplicatedJobNameKey] = rj.Name
	labels[jobset.JobIndexKey] = fmt.Sprint(j)
	labels[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(i)
	annotations := maps.Clone(tmpl.Annotations)
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[batchv1.JobCompletionIndexAnnotation] = fmt.Sprint(i)
	return metav1.ObjectMeta{
		Name:      fmt.Sprintf("%s-%s-%d-%d-local", js.Name, rj.Name, j, i),
		Namespace: js.Namespace, Labels: labels, Annotations: annotations,
	}
}

// subdomain is the JobSet's headless service name.
func subdomain(js *jobset.JobSet) string {
	if js.Spec.Network != nil && js.Spec.Network.Subdomain != "" {
		return js.Spec.Network.Subdomain
	}
	return js.Name
}

// elasticMin reads torchrun's node range (PET_NNODES=min:max, what the torch plugin renders for
// an elastic TrainJob) from a step's environment.
func elasticMin(env []EnvVar) (int, bool) {
	for _, e := range env {
		if e.Name != "PET_NNODES" {
			continue
		}
		lo, _, ok := strings.Cut(e.Value, ":")
		n, err := strconv.Atoi(lo)
		return n, ok && err == nil && n >= 1
	}
	return 0, false
}

// hostRendezvous says which node hosts torchrun's c10d store. On a cluster only node 0's name
// matches the endpoint; here every node matches 127.0.0.1 and the first to bind would host it,
// so a node leaving could take the store with it.
func hostRendezvous(s *Step, host bool) {
	const name = "PET_RDZV_CONF"
	conf := "is_host=" + strconv.FormatBool(host)
	from := ""
	for i, e := range s.Env {
		if e.Name == name {
			from = e.Value
			s.Env[i].Value = e.Value + "," + conf
			s.Rewrites = append(s.Rewrites, Rewrite{Where: "env " + name, From: from, To: s.Env[i].Value, Why: WhyRdzv})
			return
		}
	}
	s.Env = append(s.Env, EnvVar{Name: name, Value: conf})
	s.Rewrites = append(s.Rewrites, Rewrite{Where: "env " + name, From: from, To: conf, Why: WhyRdzv})
}
