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

// Package flux runs a TrainJob as a Flux Framework instance: an init container installs Flux into
// a shared volume, and every node pod starts a broker that joins the instance over CURVE.
package flux

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"maps"
	"strings"
	"text/template"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "Flux"

// Broker settings, read from the node container's env over these defaults.
const (
	EnvViewImage     = "FLUX_VIEW_IMAGE"
	EnvNetworkDevice = "FLUX_NETWORK_DEVICE"
	EnvQueuePolicy   = "FLUX_QUEUE_POLICY"
)

var defaults = map[string]string{
	EnvViewImage:     "ghcr.io/converged-computing/flux-view-ubuntu:tag-jammy",
	EnvNetworkDevice: "eth0",
	EnvQueuePolicy:   "fcfs",
}

// Names of what the plugin adds.
const (
	Installer        = "flux-installer"
	configDir        = "/etc/flux-config"
	entrypointSuffix = "-flux-entrypoint"
	curveSuffix      = "-flux-curve"
	curveKey         = "curve.cert"
	spackVolume      = "spack-install"
	installVolume    = "flux-install"
	shmVolume        = "shared-memory"
	curveVolume      = "flux-curve"
)

var (
	//go:embed templates/entrypoint.sh
	entrypointTemplate string
	//go:embed templates/init.sh
	initScript string

	entrypoint = template.Must(template.New("entrypoint.sh").Parse(entrypointTemplate))
)

// Flux is the Flux Framework ML policy.
type Flux struct{}

var (
	_ framework.EnforceMLPolicyPlugin  = (*Flux)(nil)
	_ framework.ComponentBuilderPlugin = (*Flux)(nil)
	_ framework.CustomValidationPlugin = (*Flux)(nil)
)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &Flux{}, nil
}

// Name returns the plugin name.
func (*Flux) Name() string { return Name }

// MLPolicyKind is Flux.
func (*Flux) MLPolicyKind() runtime.MLPolicyKind { return runtime.Flux }

// EnforceMLPolicy wraps the training command in the Flux entrypoint and adds the installer, the
// volumes and the mounts a broker needs.
func (*Flux) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	ps, node, err := info.TrainerNode()
	if err != nil {
		return err
	}
	if tj.Spec.Trainer != nil {
		info.SetTrainerCount(tj.Spec.Trainer.NumNodes)
	}
	original := strings.Join(append(append([]string{}, node.Command...), node.Args...), " ")
	node.Command = []string{"/bin/bash", configDir + "/entrypoint.sh", original}
	node.Args = nil
	node.VolumeMounts = runtime.UpsertVolumeMounts(node.VolumeMounts,
		corev1.VolumeMount{Name: installVolume, MountPath: "/mnt/flux"},
		corev1.VolumeMount{Name: spackVolume, MountPath: "/opt/software"},
		corev1.VolumeMount{Name: entrypointVolume(tj), MountPath: configDir, ReadOnly: true},
		corev1.VolumeMount{Name: curveVolume, MountPath: "/curve", ReadOnly: true},
		// Writable: MPI and NCCL put their shared-memory segments here.
		corev1.VolumeMount{Name: shmVolume, MountPath: "/dev/shm"},
	)
	ps.InitContainers = append(ps.InitContainers, runtime.Container{
		Name:    Installer,
		Image:   settings(node)[EnvViewImage],
		Command: []string{"/bin/bash", configDir + "/init.sh"},
		// The view image's own /opt/software is what init.sh copies out, so no volume may hide it.
		VolumeMounts: []corev1.VolumeMount{
			{Name: installVolume, MountPath: "/mnt/flux"},
			{Name: entrypointVolume(tj), MountPath: configDir, ReadOnly: true},
		},
	})
	ps.Volumes = runtime.UpsertVolumes(ps.Volumes,
		corev1.Volume{Name: spackVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: installVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		corev1.Volume{Name: entrypointVolume(tj), VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: tj.Name + entrypointSuffix},
			DefaultMode:          ptr.To[int32](0o755),
		}}},
		corev1.Volume{Name: shmVolume, VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory}}},
		corev1.Volume{Name: curveVolume, VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  tj.Name + curveSuffix,
			DefaultMode: ptr.To[int32](0o400),
		}}},
	)
	return nil
}

func entrypointVolume(tj *trainer.TrainJob) string {
	return tj.Name + entrypointSuffix
}

// settings are the broker settings: defaults, overridden by the node container's env (the
// runtime's, then the TrainJob's).
func settings(node *runtime.Container) map[string]string {
	out := map[string]string{}
	maps.Copy(out, defaults)
	for _, e := range node.Env {
		if _, ok := defaults[e.Name]; ok && e.Value != "" {
			out[e.Name] = e.Value
		}
	}
	return out
}

// Build returns the entrypoint ConfigMap and the CURVE certificate Secret.
func (*Flux) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	ps, node, err := info.TrainerNode()
	if err != nil {
		return nil, err
	}
	script, err := renderEntrypoint(info, tj, ps, node)
	if err != nil {
		return nil, err
	}
	curve := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: runtime.OwnedBy(tj, tj.Name+curveSuffix),
		Immutable:  ptr.To(true),
	}
	return []apply.Desired{
		{Object: &corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: runtime.OwnedBy(tj, tj.Name+entrypointSuffix),
			Data:       map[string]string{"entrypoint.sh": script, "init.sh": initScript},
		}},
		// Created once with a key from crypto/rand, never rewritten: the brokers of a running
		// instance keep it, and nothing readable from the TrainJob lets anyone derive it.
		{Object: curve, Mode: apply.IfAbsent, Complete: func() error {
			cert, err := curveCert(tj.Name)
			if err != nil {
				return err
			}
			curve.Data = map[string][]byte{curveKey: []byte(cert)}
			return nil
		}},
	}, nil
}

func renderEntrypoint(info *runtime.Info, tj *trainer.TrainJob, ps *runtime.PodSet, node *runtime.Container) (string, error) {
	tasks := ptr.Deref(info.RuntimePolicy.MLPolicy.Flux.NumProcPerNode, 1)
	if t := tj.Spec.Trainer; t != nil && t.NumProcPerNode != nil {
		tasks = *t.NumProcPerNode
	}
	cpu := node.Resources.Requests[corev1.ResourceCPU]
	if cpu.IsZero() {
		cpu = node.Resources.Limits[corev1.ResourceCPU]
	}
	cores := max(cpu.Value(), 1)
	gpus := runtime.NumGPU(node.Resources)
	s := settings(node)
	data := map[string]any{
		"Name":          tj.Name,
		"Namespace":     tj.Namespace,
		"Subdomain":     info.Subdomain,
		"Nodes":         ps.Count,
		"TotalTasks":    tasks * ps.Count,
		"HostList":      fmt.Sprintf("%s-%s-0-[0-%d]", tj.Name, ps.Name, ps.Count-1),
		"Cores":         cores,
		"LastCore":      cores - 1,
		"GPUs":          gpus,
		"LastGPU":       gpus - 1,
		"NetworkDevice": s[EnvNetworkDevice],
		"QueuePolicy":   s[EnvQueuePolicy],
	}
	var b bytes.Buffer
	if err := entrypoint.Execute(&b, data); err != nil {
		return "", fmt.Errorf("rendering the Flux entrypoint: %w", err)
	}
	return b.String(), nil
}

// Validate refuses a runtime whose trainer job already has an init container named like the
// installer, at Kubeflow Trainer's path (spec.trainer.initContainers, though the container is the
// runtime's), with its value and message.
func (*Flux) Validate(info *runtime.Info, _, _ *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	ps := info.PodSetByAncestor(trainer.AncestorTrainer)
	if ps == nil {
		return nil, nil
	}
	for _, c := range ps.InitContainers {
		if c.Name == Installer {
			return nil, field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "initContainers"), c.Name,
				fmt.Sprintf("InitContainer '%s' is reserved", Installer))}
		}
	}
	return nil, nil
}
