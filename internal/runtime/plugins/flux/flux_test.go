package flux

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
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

func TestCurveCertIsDeterministic(t *testing.T) {
	a, err := curveCert("uid-1", "job")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := curveCert("uid-1", "job")
	c, _ := curveCert("uid-2", "job")
	if a != b {
		t.Error("the same seed gave two certificates")
	}
	if a == c {
		t.Error("two seeds gave one certificate")
	}
	for _, key := range []string{"public-key", "secret-key"} {
		i := strings.Index(a, key+` = "`)
		if i < 0 || len(a) < i+len(key)+4+40 || a[i+len(key)+4+40] != '"' {
			t.Errorf("certificate lacks a 40-character %s:\n%s", key, a)
		}
	}
}

func fluxInfo(t *testing.T, tj *trainer.TrainJob, env ...corev1.EnvVar) *runtime.Info {
	t.Helper()
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Flux(&trainer.FluxMLPolicySource{}).Obj()
	node := &spec.Template.Spec.ReplicatedJobs[2].Template.Spec.Template.Spec.Containers[0]
	node.Command = []string{"lmp", "-in", "in.reaxff"}
	node.Env = env
	node.Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4")}
	info, err := core.NewInfo(tj, "flux-runtime", &spec)
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
	if !strings.Contains(string(secret.Data[curveKey]), "secret-key") {
		t.Errorf("curve.cert = %q", secret.Data[curveKey])
	}
}

func TestValidateReservedInstaller(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Flux(&trainer.FluxMLPolicySource{}).Obj()
	pod := &spec.Template.Spec.ReplicatedJobs[2].Template.Spec.Template.Spec
	pod.InitContainers = []corev1.Container{{Name: Installer, Image: "x"}}
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	info, err := core.NewInfo(tj, "flux", &spec)
	if err != nil {
		t.Fatal(err)
	}
	_, errs := (&Flux{}).Validate(info, nil, tj)
	if diff := cmp.Diff(`spec.runtimeRef: Invalid value: "torch-distributed": InitContainer 'flux-installer' is reserved`, errs.ToAggregate().Error()); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
}
