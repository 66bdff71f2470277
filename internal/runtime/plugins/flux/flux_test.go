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

package flux

import (
	"context"
	"crypto/ecdh"
	"crypto/sha256"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestZ85(t *testing.T) {
	// The test vector of ZeroMQ RFC 32.
	got := z85([]byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B})
	if diff := cmp.Diff("HelloWorld", got); diff != "" {
		t.Errorf("z85 (-want,+got):\n%s", diff)
	}
}

// TestCurveSecretIsRandomAndCreatedOnce: the CURVE secret key comes from crypto/rand, not from
// anything readable on the TrainJob (it was sha256 of UID/namespace/name, which anyone allowed to
// get the TrainJob could compute), and the Secret is created once and immutable.
func TestCurveSecretIsRandomAndCreatedOnce(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	tj.UID = "uid-1"
	objs, err := (&Flux{}).Build(context.Background(), fluxInfo(t, tj), tj)
	if err != nil {
		t.Fatal(err)
	}
	var curve apply.Desired
	for _, o := range objs {
		if o.GetName() == "job-flux-curve" {
			curve = o
		}
	}
	if curve.Object == nil || curve.Mode != apply.IfAbsent || curve.Complete == nil {
		t.Fatalf("the CURVE Secret is not a create-once object with a generator: %+v", curve)
	}
	secret := curve.Object.(*corev1.Secret)
	if !ptr.Deref(secret.Immutable, false) {
		t.Error("the CURVE Secret is mutable")
	}
	var certs []string
	for range 2 {
		if err := curve.Complete(); err != nil {
			t.Fatal(err)
		}
		certs = append(certs, string(secret.Data[curveKey]))
	}
	if certs[0] == certs[1] {
		t.Error("two generations gave the same key")
	}
	derived := sha256.Sum256([]byte(string(tj.UID) + "/" + tj.Namespace + "/" + tj.Name))
	key, err := ecdh.X25519().NewPrivateKey(derived[:])
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(certs[0], z85(key.Bytes())) {
		t.Error("the secret key is derivable from the TrainJob")
	}
	for _, k := range []string{"public-key", "secret-key"} {
		i := strings.Index(certs[0], k+` = "`)
		if i < 0 || len(certs[0]) < i+len(k)+4+40 || certs[0][i+len(k)+4+40] != '"' {
			t.Errorf("certificate lacks a 40-character %s:\n%s", k, certs[0])
		}
	}
}

func fluxInfo(t *testing.T, tj *trainer.TrainJob, env ...corev1.EnvVar) *runtime.Info {
	t.Helper()
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Flux(&trainer.FluxMLPolicySource{}).Obj()
	node := &utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0]
	node.Command = []string{"lmp", "-in", "in.reaxff"}
	node.Env = env
	node.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	info, err := core.NewInfo(tj, "flux-runtime", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&Flux{}).EnforceMLPolicy(info, tj); err != nil {
		t.Fatal(err)
	}
	return info
}

func TestEnforceMLPolicy(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("hpc", "lammps").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(3).
		Env(corev1.EnvVar{Name: EnvQueuePolicy, Value: "easy"}).Obj()).Obj()
	info := fluxInfo(t, tj, corev1.EnvVar{Name: EnvViewImage, Value: "example.com/flux-view:1"})
	ps := info.PodSetByName("node")
	node := ps.Container("node")
	if diff := cmp.Diff([]string{"/bin/bash", "/etc/flux-config/entrypoint.sh", "lmp -in in.reaxff"}, node.Command); diff != "" {
		t.Errorf("command (-want,+got):\n%s", diff)
	}
	if node.Args != nil {
		t.Errorf("args = %v, want none", node.Args)
	}
	installer := ps.InitContainers[len(ps.InitContainers)-1]
	if diff := cmp.Diff([]string{Installer, "example.com/flux-view:1"}, []string{installer.Name, installer.Image}); diff != "" {
		t.Errorf("installer (-want,+got):\n%s", diff)
	}
	// The reference's mounts, in its order: nothing may hide the view image's /opt/software,
	// which init.sh copies out.
	wantInstallerMounts := []corev1.VolumeMount{
		{Name: "flux-install", MountPath: "/mnt/flux"},
		{Name: "lammps-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
	}
	if diff := cmp.Diff(wantInstallerMounts, installer.VolumeMounts); diff != "" {
		t.Errorf("installer mounts (-want,+got):\n%s", diff)
	}
	// The trainer's: the reference's, except /dev/shm, writable on purpose (docs/compatibility.md).
	wantNodeMounts := []corev1.VolumeMount{
		{Name: "initializer", MountPath: "/workspace"},
		{Name: "flux-install", MountPath: "/mnt/flux"},
		{Name: "spack-install", MountPath: "/opt/software"},
		{Name: "lammps-flux-entrypoint", MountPath: "/etc/flux-config", ReadOnly: true},
		{Name: "flux-curve", MountPath: "/curve", ReadOnly: true},
		{Name: "shared-memory", MountPath: "/dev/shm"},
	}
	if diff := cmp.Diff(wantNodeMounts, node.VolumeMounts); diff != "" {
		t.Errorf("node mounts (-want,+got):\n%s", diff)
	}
	var volumes []string
	for _, v := range ps.Volumes {
		volumes = append(volumes, v.Name)
	}
	want := []string{"initializer", "spack-install", "flux-install", "lammps-flux-entrypoint", "shared-memory", "flux-curve"}
	if diff := cmp.Diff(want, volumes); diff != "" {
		t.Errorf("volumes (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(int32(3), ps.Count); diff != "" {
		t.Errorf("count (-want,+got):\n%s", diff)
	}

	tj.UID = "uid"
	objs, err := (&Flux{}).Build(context.Background(), info, tj)
	if err != nil {
		t.Fatal(err)
	}
	script := objs[0].Object.(*corev1.ConfigMap).Data["entrypoint.sh"]
	for _, s := range []string{
		`hosts = [{ host = "lammps-node-0-[0-2]" }]`,
		`default_connect = "tcp://%h.lammps.hpc.svc.cluster.local:%p"`,
		`queue-policy = "easy"`,
		`--cores=0-3 > "${config}/R"`,
		`flux run -N 3 -n 3 /bin/bash -c "$1"`,
	} {
		if !strings.Contains(script, s) {
			t.Errorf("entrypoint.sh lacks %q:\n%s", s, script)
		}
	}
	secret := objs[1].Object.(*corev1.Secret)
	if err := objs[1].Complete(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(secret.Data[curveKey]), "secret-key") {
		t.Errorf("curve.cert = %q", secret.Data[curveKey])
	}
}

func TestValidateReservedInstaller(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Flux(&trainer.FluxMLPolicySource{}).Obj()
	pod := &utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec
	pod.InitContainers = []corev1.Container{{Name: Installer, Image: "x"}}
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	info, err := core.NewInfo(tj, "flux", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, errs := (&Flux{}).Validate(info, nil, tj)
	// Kubeflow Trainer's path, value and message (its flux plugin's Validate).
	if diff := cmp.Diff(`spec.trainer.initContainers: Invalid value: "flux-installer": InitContainer 'flux-installer' is reserved`, errs.ToAggregate().Error()); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
}
