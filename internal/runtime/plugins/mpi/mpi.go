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

// Package mpi runs OpenMPI jobs: SSH keys in a Secret, a hostfile ConfigMap, the launcher's
// OMPI_MCA_* environment, and node counts that treat the launcher as a node when asked.
package mpi

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "MPI"

// Names of the replicated jobs, volumes and files of an MPI runtime.
const (
	Launcher        = "launcher"
	Node            = runtime.NodeJob
	sshAuthVolume   = "mpi-ssh-auth"
	hostfileVolume  = "mpi-hostfile"
	hostfileKey     = "hostfile"
	hostfileDir     = "/etc/mpi"
	sshPublicKey    = "ssh-publickey"
	sshAuthSuffix   = "-mpi-ssh-auth"
	hostfileSuffix  = "-mpi-hostfile"
	defaultHostfile = hostfileDir + "/" + hostfileKey
)

// OpenMPI environment of the launcher.
const (
	EnvDefaultHostfile  = "OMPI_MCA_orte_default_hostfile"
	EnvKeepFQDNHostname = "OMPI_MCA_orte_keep_fqdn_hostnames"
	EnvDefaultSlots     = "OMPI_MCA_orte_set_default_slots"
	EnvRSHArgs          = "OMPI_MCA_plm_rsh_args"
)

var reservedEnv = sets.New(EnvDefaultHostfile, EnvKeepFQDNHostname, EnvDefaultSlots, EnvRSHArgs)

// MPI is the MPI ML policy.
type MPI struct{}

var (
	_ framework.EnforceMLPolicyPlugin  = (*MPI)(nil)
	_ framework.ComponentBuilderPlugin = (*MPI)(nil)
	_ framework.CustomValidationPlugin = (*MPI)(nil)
)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &MPI{}, nil
}

// Name returns the plugin name.
func (*MPI) Name() string { return Name }

// MLPolicyKind is MPI.
func (*MPI) MLPolicyKind() runtime.MLPolicyKind { return runtime.MPI }

// EnforceMLPolicy sizes the node job, mounts the SSH keys into launcher and nodes and the
// hostfile into the launcher, and sets the launcher's OpenMPI environment.
func (*MPI) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	policy := info.RuntimePolicy.MLPolicy.MPI
	if impl := ptr.Deref(policy.MPIImplementation, trainer.MPIImplementationOpenMPI); impl != trainer.MPIImplementationOpenMPI && impl != "" {
		return fmt.Errorf("MPI implementation %q is not supported: only %s is", impl, trainer.MPIImplementationOpenMPI)
	}
	if t := tj.Spec.Trainer; t != nil && t.NumNodes != nil {
		if node := info.PodSetByName(Node); node != nil {
			node.Count = *t.NumNodes
			if ptr.Deref(policy.RunLauncherAsNode, false) {
				node.Count = max(*t.NumNodes-1, 1)
			}
		}
	}
	mountPath := ptr.Deref(policy.SSHAuthMountPath, "/root/.ssh")
	for _, name := range []string{Launcher, Node} {
		ps := info.PodSetByName(name)
		if ps == nil {
			continue
		}
		ps.Volumes = runtime.UpsertVolumes(ps.Volumes, sshAuthVolumeOf(tj))
		if c := ps.Container(runtime.NodeContainer); c != nil {
			c.VolumeMounts = runtime.UpsertVolumeMounts(c.VolumeMounts, corev1.VolumeMount{Name: sshAuthVolume, MountPath: mountPath})
		}
	}
	launcher := info.PodSetByName(Launcher)
	if launcher == nil {
		return nil
	}
	launcher.Volumes = runtime.UpsertVolumes(launcher.Volumes, corev1.Volume{
		Name: hostfileVolume,
		VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: tj.Name + hostfileSuffix},
			Items:                []corev1.KeyToPath{{Key: hostfileKey, Path: hostfileKey, Mode: ptr.To[int32](0o444)}},
		}},
	})
	if c := launcher.Container(runtime.NodeContainer); c != nil {
		c.VolumeMounts = runtime.UpsertVolumeMounts(c.VolumeMounts, corev1.VolumeMount{Name: hostfileVolume, MountPath: hostfileDir})
		c.Env = runtime.UpsertEnv(c.Env,
			corev1.EnvVar{Name: EnvDefaultHostfile, Value: defaultHostfile},
			corev1.EnvVar{Name: EnvKeepFQDNHostname, Value: "true"},
			corev1.EnvVar{Name: EnvDefaultSlots, Value: strconv.Itoa(int(slots(info, tj)))},
			corev1.EnvVar{Name: EnvRSHArgs, Value: "-o ConnectionAttempts=10"},
		)
	}
	return nil
}

// sshAuthVolumeOf projects the key pair as id_rsa, id_rsa.pub and authorized_keys with the modes
// sshd insists on.
func sshAuthVolumeOf(tj *trainer.TrainJob) corev1.Volume {
	return corev1.Volume{
		Name: sshAuthVolume,
		VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
			SecretName:  tj.Name + sshAuthSuffix,
			DefaultMode: ptr.To[int32](0o400),
			Items: []corev1.KeyToPath{
				{Key: corev1.SSHAuthPrivateKey, Path: "id_rsa", Mode: ptr.To[int32](0o640)},
				{Key: sshPublicKey, Path: "id_rsa.pub", Mode: ptr.To[int32](0o644)},
				{Key: sshPublicKey, Path: "authorized_keys", Mode: ptr.To[int32](0o644)},
			},
		}},
	}
}

// slots is the TrainJob's numProcPerNode; else one per GPU when the runtime leaves it at 1 on
// multi-GPU nodes; else the runtime's.
func slots(info *runtime.Info, tj *trainer.TrainJob) int32 {
	if t := tj.Spec.Trainer; t != nil && t.NumProcPerNode != nil {
		return *t.NumProcPerNode
	}
	n := ptr.Deref(info.RuntimePolicy.MLPolicy.MPI.NumProcPerNode, 1)
	if gpus := numGPU(info, tj); n == 1 && gpus > 1 {
		return int32(gpus)
	}
	return n
}

func numGPU(info *runtime.Info, tj *trainer.TrainJob) int64 {
	if t := tj.Spec.Trainer; t != nil && t.ResourcesPerNode != nil {
		return runtime.NumGPU(*t.ResourcesPerNode)
	}
	if c := info.TrainerContainer(); c != nil {
		return runtime.NumGPU(c.Resources)
	}
	return 0
}

// Build returns the SSH Secret (created once, never rotated) and the hostfile.
func (*MPI) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	secret := &corev1.Secret{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
		ObjectMeta: runtime.OwnedBy(tj, tj.Name+sshAuthSuffix),
		Type:       corev1.SecretTypeSSHAuth,
		Immutable:  ptr.To(true),
	}
	hostfile := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: runtime.OwnedBy(tj, tj.Name+hostfileSuffix),
		Data:       map[string]string{hostfileKey: hostfileOf(info, tj)},
	}
	return []apply.Desired{
		{Object: secret, Mode: apply.IfAbsent, Complete: func() error { return generateSSHAuth(secret) }},
		{Object: hostfile, Mode: apply.Always},
	}, nil
}

// hostfileOf lists every MPI node with its slots, in template order.
func hostfileOf(info *runtime.Info, tj *trainer.TrainJob) string {
	launcherIsNode := ptr.Deref(info.RuntimePolicy.MLPolicy.MPI.RunLauncherAsNode, false)
	n := slots(info, tj)
	var b strings.Builder
	for _, ps := range info.PodSets {
		if ps.Name != Node && (ps.Name != Launcher || !launcherIsNode) {
			continue
		}
		for _, e := range ps.Endpoints {
			fmt.Fprintf(&b, "%s slots=%d\n", e, n)
		}
	}
	return b.String()
}

// Validate refuses reserved OpenMPI env names, and more than one node when the launcher should be
// a node but the runtime lacks the launcher or node job.
func (*MPI) Validate(info *runtime.Info, _, tj *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	if tj.Spec.Trainer == nil {
		return nil, nil
	}
	var errs field.ErrorList
	t := tj.Spec.Trainer
	path := field.NewPath("spec", "trainer")
	if ptr.Deref(t.NumNodes, 1) >= 2 && ptr.Deref(info.RuntimePolicy.MLPolicy.MPI.RunLauncherAsNode, false) &&
		(info.PodSetByName(Launcher) == nil || info.PodSetByName(Node) == nil) {
		errs = append(errs, field.Invalid(path.Child("numNodes"), *t.NumNodes,
			"must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node"))
	}
	return nil, append(errs, runtime.ReservedEnvInvalid(t, reservedEnv)...)
}
