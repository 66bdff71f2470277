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

package mpi

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/crypto/ssh"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/jobset"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// mpiSpec is an MPI runtime with jobs launcher (the trainer) and node, in that order.
func mpiSpec(policy *trainer.MPIMLPolicySource, gpus string) trainer.TrainingRuntimeSpec {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(policy).Obj()
	jobs := spec.Template.Spec.ReplicatedJobs
	launcher, node := jobs[2], jobs[2]
	launcher.Name = Launcher
	node.Name = Node
	node.Template.Labels = nil
	node.Template.Spec.Template.Spec = *node.Template.Spec.Template.Spec.DeepCopy()
	if gpus != "" {
		node.Template.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
		launcher.Template.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": resource.MustParse(gpus)}
	}
	spec.Template.Spec.ReplicatedJobs = []jobsetv1alpha2.ReplicatedJob{launcher, node}
	return spec
}

func build(t *testing.T, spec trainer.TrainingRuntimeSpec, tj *trainer.TrainJob) (*runtime.Info, []apply.Desired) {
	t.Helper()
	info, err := core.NewInfo(tj, "mpi", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&MPI{}).EnforceMLPolicy(info, tj); err != nil {
		t.Fatalf("EnforceMLPolicy() error: %v", err)
	}
	if err := (&jobset.JobSet{}).PreBuildSync(info, tj); err != nil {
		t.Fatal(err)
	}
	objs, err := (&MPI{}).Build(context.Background(), info, tj)
	if err != nil {
		t.Fatalf("Build() error: %v", err)
	}
	return info, objs
}

func TestCountsSlotsAndHostfile(t *testing.T) {
	cases := map[string]struct {
		policy       *trainer.MPIMLPolicySource
		gpus         string
		trainer      *trainer.Trainer
		wantCount    int32
		wantSlots    string
		wantHostfile string
	}{
		"launcher as node: numNodes-1 workers, launcher listed in template order": {
			policy:    &trainer.MPIMLPolicySource{NumProcPerNode: ptr.To[int32](2), RunLauncherAsNode: ptr.To(true)},
			trainer:   utiltesting.MakeTrainerWrapper().NumNodes(3).Obj(),
			wantCount: 2,
			wantSlots: "2",
			wantHostfile: "tj-launcher-0-0.tj slots=2\n" +
				"tj-node-0-0.tj slots=2\n" +
				"tj-node-0-1.tj slots=2\n",
		},
		"launcher as node with one node still runs one worker": {
			policy:       &trainer.MPIMLPolicySource{NumProcPerNode: ptr.To[int32](1), RunLauncherAsNode: ptr.To(true)},
			trainer:      utiltesting.MakeTrainerWrapper().NumNodes(1).Obj(),
			wantCount:    1,
			wantSlots:    "1",
			wantHostfile: "tj-launcher-0-0.tj slots=1\ntj-node-0-0.tj slots=1\n",
		},
		"separate launcher: numNodes workers, launcher not in the hostfile": {
			policy:       &trainer.MPIMLPolicySource{NumProcPerNode: ptr.To[int32](1), RunLauncherAsNode: ptr.To(false)},
			trainer:      utiltesting.MakeTrainerWrapper().NumNodes(2).NumProcPerNode(3).Obj(),
			wantCount:    2,
			wantSlots:    "3",
			wantHostfile: "tj-node-0-0.tj slots=3\ntj-node-0-1.tj slots=3\n",
		},
		"one slot per GPU when the runtime leaves it at 1": {
			policy:       &trainer.MPIMLPolicySource{NumProcPerNode: ptr.To[int32](1)},
			gpus:         "4",
			trainer:      utiltesting.MakeTrainerWrapper().NumNodes(1).Obj(),
			wantCount:    1,
			wantSlots:    "4",
			wantHostfile: "tj-node-0-0.tj slots=4\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(tc.trainer).Obj()
			info, objs := build(t, mpiSpec(tc.policy, tc.gpus), tj)
			if diff := cmp.Diff(tc.wantCount, info.PodSetByName(Node).Count); diff != "" {
				t.Errorf("node count (-want,+got):\n%s", diff)
			}
			wantEnv := []corev1.EnvVar{
				{Name: EnvDefaultHostfile, Value: "/etc/mpi/hostfile"},
				{Name: EnvKeepFQDNHostname, Value: "true"},
				{Name: EnvDefaultSlots, Value: tc.wantSlots},
				{Name: EnvRSHArgs, Value: "-o ConnectionAttempts=10"},
			}
			if diff := cmp.Diff(wantEnv, info.PodSetByName(Launcher).Container("node").Env); diff != "" {
				t.Errorf("launcher env (-want,+got):\n%s", diff)
			}
			hostfile := objs[1].Object.(*corev1.ConfigMap)
			if diff := cmp.Diff(map[string]string{"hostfile": tc.wantHostfile}, hostfile.Data); diff != "" {
				t.Errorf("hostfile (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestMountsAndSecret(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()).Obj()
	tj.UID = "uid-1"
	info, objs := build(t, mpiSpec(&trainer.MPIMLPolicySource{SSHAuthMountPath: ptr.To("/home/mpiuser/.ssh")}, ""), tj)

	launcher := info.PodSetByName(Launcher).Container("node")
	wantLauncherMounts := []corev1.VolumeMount{
		{Name: utiltesting.InitializerVolume, MountPath: "/workspace"},
		{Name: "mpi-ssh-auth", MountPath: "/home/mpiuser/.ssh"},
		{Name: "mpi-hostfile", MountPath: "/etc/mpi"},
	}
	if diff := cmp.Diff(wantLauncherMounts, launcher.VolumeMounts); diff != "" {
		t.Errorf("launcher mounts (-want,+got):\n%s", diff)
	}
	node := info.PodSetByName(Node).Container("node")
	if diff := cmp.Diff(wantLauncherMounts[:2], node.VolumeMounts); diff != "" {
		t.Errorf("node mounts (-want,+got):\n%s", diff)
	}
	wantSecretVolume := corev1.Volume{Name: "mpi-ssh-auth", VolumeSource: corev1.VolumeSource{Secret: &corev1.SecretVolumeSource{
		SecretName:  "tj-mpi-ssh-auth",
		DefaultMode: ptr.To[int32](0o400),
		Items: []corev1.KeyToPath{
			{Key: "ssh-privatekey", Path: "id_rsa", Mode: ptr.To[int32](0o640)},
			{Key: "ssh-publickey", Path: "id_rsa.pub", Mode: ptr.To[int32](0o644)},
			{Key: "ssh-publickey", Path: "authorized_keys", Mode: ptr.To[int32](0o644)},
		},
	}}}
	if diff := cmp.Diff(wantSecretVolume, info.PodSetByName(Node).Volumes[1]); diff != "" {
		t.Errorf("SSH volume (-want,+got):\n%s", diff)
	}

	if diff := cmp.Diff(apply.IfAbsent, objs[0].Mode); diff != "" {
		t.Errorf("Secret mode (-want,+got):\n%s", diff)
	}
	secret := objs[0].Object.(*corev1.Secret)
	if secret.Data != nil {
		t.Fatalf("the key pair was generated before Complete: %v", secret.Data)
	}
	if err := objs[0].Complete(); err != nil {
		t.Fatal(err)
	}
	if secret.Type != corev1.SecretTypeSSHAuth || !ptr.Deref(secret.Immutable, false) || secret.OwnerReferences[0].UID != "uid-1" {
		t.Errorf("Secret type %q, immutable %v, owner %v", secret.Type, secret.Immutable, secret.OwnerReferences)
	}
	block, _ := pem.Decode(secret.Data["ssh-privatekey"])
	if block == nil || block.Type != "EC PRIVATE KEY" {
		t.Fatalf("private key is not an EC PEM block: %q", secret.Data["ssh-privatekey"])
	}
	key, err := x509.ParseECPrivateKey(block.Bytes)
	if err != nil || key.Curve.Params().Name != "P-521" {
		t.Fatalf("private key: %v, curve %v", err, key)
	}
	pub, _, _, _, err := ssh.ParseAuthorizedKey(secret.Data["ssh-publickey"])
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(signer.PublicKey().Marshal()), string(pub.Marshal())); diff != "" {
		t.Errorf("public key does not match the private key")
	}
}

func TestValidate(t *testing.T) {
	launcherOnly := utiltesting.MakeTrainingRuntimeSpecWrapper().MPI(&trainer.MPIMLPolicySource{RunLauncherAsNode: ptr.To(true)}).Obj()
	utiltesting.Job(launcherOnly.Template.Spec.ReplicatedJobs, utiltesting.Node).Name = Launcher
	cases := map[string]struct {
		spec    trainer.TrainingRuntimeSpec
		trainer *trainer.Trainer
		want    string
	}{
		"valid": {
			spec:    mpiSpec(&trainer.MPIMLPolicySource{RunLauncherAsNode: ptr.To(true)}, ""),
			trainer: utiltesting.MakeTrainerWrapper().NumNodes(4).Obj(),
		},
		"launcher as node without a node job": {
			spec:    launcherOnly,
			trainer: utiltesting.MakeTrainerWrapper().NumNodes(2).Obj(),
			want:    "spec.trainer.numNodes: Invalid value: 2: must have 1 when MPI trainingRuntime with enabled runLauncherAsNode does not have either launcher and node",
		},
		"reserved env": {
			spec: mpiSpec(&trainer.MPIMLPolicySource{}, ""),
			trainer: utiltesting.MakeTrainerWrapper().Env(corev1.EnvVar{Name: EnvDefaultSlots, Value: "9"},
				corev1.EnvVar{Name: "OK", Value: "1"}).Obj(),
			want: `spec.trainer.env: Invalid value: [{"name":"OMPI_MCA_orte_set_default_slots","value":"9"},{"name":"OK","value":"1"}]: must not have reserved envs, invalid envs configured: [OMPI_MCA_orte_set_default_slots]`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(tc.trainer).Obj()
			info, err := core.NewInfo(tj, "mpi", &tc.spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, errs := (&MPI{}).Validate(info, nil, tj)
			got := ""
			if len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Validate() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestUnsupportedImplementation(t *testing.T) {
	impl := trainer.MPIImplementationMPICH
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	spec := mpiSpec(&trainer.MPIMLPolicySource{MPIImplementation: &impl}, "")
	info, err := core.NewInfo(tj, "mpi", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = (&MPI{}).EnforceMLPolicy(info, tj)
	if diff := cmp.Diff(`MPI implementation "MPICH" is not supported: only OpenMPI is`, err.Error()); diff != "" {
		t.Errorf("error (-want,+got):\n%s", diff)
	}
}
