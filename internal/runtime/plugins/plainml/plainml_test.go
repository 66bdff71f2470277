package plainml

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"

	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestEnforceMLPolicy(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "plain").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(5).
		Env(corev1.EnvVar{Name: "A", Value: "1"}).Obj()).Obj()
	info, err := core.NewInfo(tj, "plain", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := (&PlainML{}).EnforceMLPolicy(info, tj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(int32(5), info.PodSetByName("node").Count); diff != "" {
		t.Errorf("count (-want,+got):\n%s", diff)
	}
	// The user's env and nothing else.
	if diff := cmp.Diff([]corev1.EnvVar{{Name: "A", Value: "1"}}, info.TrainerContainer().Env); diff != "" {
		t.Errorf("env (-want,+got):\n%s", diff)
	}
	if got := info.TrainerContainer().Ports; len(got) != 0 {
		t.Errorf("ports = %v, want none", got)
	}
}
