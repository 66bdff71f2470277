package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestValidateRuntime(t *testing.T) {
	twoReplicas := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	twoReplicas.Template.Spec.ReplicatedJobs[2].Replicas = 2
	noContainer := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	noContainer.Template.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec.Containers[0].Name = "loader"
	bothGangs := utiltesting.MakeTrainingRuntimeSpecWrapper().Coscheduling(&trainer.CoschedulingPodGroupPolicySource{}).Obj()
	bothGangs.PodGroupPolicy.Volcano = &trainer.VolcanoPodGroupPolicySource{}
	cases := map[string]struct {
		rt   client.Object
		want string
	}{
		"valid TrainingRuntime": {rt: utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Obj()},
		"trainer job with two replicas": {
			rt:   utiltesting.MakeClusterTrainingRuntimeWrapper("rt").Spec(twoReplicas).Obj(),
			want: "spec.template.spec.replicatedJobs[2].replicas: Invalid value: 2: always must be 1",
		},
		"initializer job without its container": {
			rt:   utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(noContainer).Obj(),
			want: "spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: must contain the required container for the ancestor: dataset-initializer",
		},
		"two gang schedulers": {
			rt:   utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(bothGangs).Obj(),
			want: "spec.podGroupPolicy: Forbidden: only one of coscheduling and volcano can be configured",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if errs := ValidateRuntime(tc.rt); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateRuntime() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDeprecationWarnings(t *testing.T) {
	deprecated := utiltesting.MakeClusterTrainingRuntimeWrapper("old").Label(trainer.SupportLabel, trainer.SupportDeprecated).Obj()
	const policy = "See runtime deprecation policy: https://trainer.kubeflow.org/en/latest/operator-guides/runtime.html#runtime-deprecation-policy"
	if diff := cmp.Diff(admission.Warnings{`ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of Kubeflow Trainer. ` + policy},
		RuntimeWarnings(deprecated)); diff != "" {
		t.Errorf("RuntimeWarnings (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff(admission.Warnings{`Referenced ClusterTrainingRuntime "old" is deprecated and will be removed in a future release of Kubeflow Trainer. ` + policy},
		TrainJobWarnings(deprecated)); diff != "" {
		t.Errorf("TrainJobWarnings (-want,+got):\n%s", diff)
	}
	namespaced := utiltesting.MakeTrainingRuntimeWrapper("ns", "old").Label(trainer.SupportLabel, trainer.SupportDeprecated).Obj()
	if w := append(RuntimeWarnings(namespaced), TrainJobWarnings(utiltesting.MakeClusterTrainingRuntimeWrapper("new").Obj())...); len(w) != 0 {
		t.Errorf("unexpected warnings %v", w)
	}
}

func TestCheckSupported(t *testing.T) {
	cases := map[string]struct {
		kind, group string
		want        string
	}{
		"defaults":               {},
		"TrainingRuntime":        {kind: trainer.TrainingRuntimeKind, group: "trainer.kubeflow.org"},
		"another group":          {kind: trainer.TrainingRuntimeKind, group: "example.com", want: "unsupported runtime: TrainingRuntime.example.com"},
		"a kind that is no kind": {kind: "TrainJob", group: "trainer.kubeflow.org", want: "unsupported runtime: TrainJob.trainer.kubeflow.org"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			if tc.kind != "" {
				tj.Spec.RuntimeRef.Kind, tj.Spec.RuntimeRef.APIGroup = &tc.kind, &tc.group
			}
			got := ""
			if err := CheckSupported(tj); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckSupported() (-want,+got):\n%s", diff)
			}
		})
	}
}
