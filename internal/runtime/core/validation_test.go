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

package core

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

const jobSetTTLRefusal = "spec.template.spec.ttlSecondsAfterFinished: Forbidden: set the annotation ttl.gantry.dev/seconds-after-finished " +
	"on the runtime or the TrainJob instead: it deletes the TrainJob when its time is up, and ttl.gantry.dev/clean-pods: All deletes only its JobSet and pods"

func TestValidateRuntime(t *testing.T) {
	twoReplicas := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(twoReplicas.Template.Spec.ReplicatedJobs, utiltesting.Node).Replicas = 2
	noContainer := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(noContainer.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Template.Spec.Containers[0].Name = "loader"
	bothGangs := utiltesting.MakeTrainingRuntimeSpecWrapper().Coscheduling(&trainer.CoschedulingPodGroupPolicySource{}).Obj()
	bothGangs.PodGroupPolicy.Volcano = &trainer.VolcanoPodGroupPolicySource{}
	spec := func(mutate func(*trainer.TrainingRuntimeSpec)) trainer.TrainingRuntimeSpec {
		s := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
		mutate(&s)
		return s
	}
	ctr := func(s trainer.TrainingRuntimeSpec) client.Object {
		return utiltesting.MakeClusterTrainingRuntimeWrapper("rt").Spec(s).Obj()
	}
	cases := map[string]struct {
		rt client.Object
		// old makes the write an update.
		old  client.Object
		want string
	}{
		"valid TrainingRuntime": {rt: utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Obj()},
		"trainer job with two replicas": {
			rt:   utiltesting.MakeClusterTrainingRuntimeWrapper("rt").Spec(twoReplicas).Obj(),
			want: "spec.template.spec.replicatedJobs[2].replicas: Invalid value: 2: always must be 1",
		},
		"initializer job without its container": {
			rt:   utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(noContainer).Obj(),
			want: `spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: [{"name":"loader","image":"dataset-initializer:test","resources":{},"volumeMounts":[{"name":"initializer","mountPath":"/workspace"}]}]: must contain the required container for the ancestor: dataset-initializer`,
		},
		"a TrainingRuntime update dropping an initializer container, as Kubeflow Trainer accepts": {
			rt:  utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(noContainer).Obj(),
			old: utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Obj(),
		},
		"a ClusterTrainingRuntime update dropping it, as Kubeflow Trainer refuses": {
			rt:   ctr(noContainer),
			old:  ctr(utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()),
			want: `spec.template.spec.replicatedJobs[0].template.spec.template.spec.containers: Invalid value: [{"name":"loader","image":"dataset-initializer:test","resources":{},"volumeMounts":[{"name":"initializer","mountPath":"/workspace"}]}]: must contain the required container for the ancestor: dataset-initializer`,
		},
		"a TrainingRuntime update that can never build": {
			rt: utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(spec(func(s *trainer.TrainingRuntimeSpec) {
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = -1
			})).Obj(),
			old:  utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Obj(),
			want: "spec.template.spec.replicatedJobs[0].replicas: Invalid value: -1: must be greater than or equal to 0",
		},
		"no replicated jobs": {
			rt:   ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.ReplicatedJobs = nil })),
			want: "spec.template.spec.replicatedJobs: Required value: a runtime needs at least one replicated job",
		},
		"negative counts": {
			rt: ctr(spec(func(s *trainer.TrainingRuntimeSpec) {
				s.MLPolicy.NumNodes = ptr.To[int32](-2)
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Labels = nil
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Replicas = -1
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Spec.Parallelism = ptr.To[int32](-3)
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Spec.Completions = ptr.To[int32](-4)
			})),
			want: "[spec.template.spec.replicatedJobs[1].replicas: Invalid value: -1: must be greater than or equal to 0, " +
				"spec.template.spec.replicatedJobs[1].template.spec.parallelism: Invalid value: -3: must be greater than or equal to 0, " +
				"spec.template.spec.replicatedJobs[1].template.spec.completions: Invalid value: -4: must be greater than or equal to 0, " +
				"spec.mlPolicy.numNodes: Invalid value: -2: must be greater than or equal to 0]",
		},
		"absurd counts": {
			rt: ctr(spec(func(s *trainer.TrainingRuntimeSpec) {
				s.MLPolicy.NumNodes = ptr.To[int32](1 << 30)
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Labels = nil
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = 1 << 20
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Parallelism = ptr.To[int32](1 << 20)
			})),
			want: "[spec.template.spec.replicatedJobs[0].replicas: Invalid value: 1048576: the product of replicas and parallelism must not exceed 2147483647, " +
				"spec.mlPolicy.numNodes: Invalid value: 1073741824: must be at most 100000, the most pods an Indexed Job runs]",
		},
		"dependsOn a later or absent job": {
			rt: ctr(spec(func(s *trainer.TrainingRuntimeSpec) {
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).DependsOn = []jobsetv1alpha2.DependsOn{{Name: "node", Status: jobsetv1alpha2.DependencyComplete}}
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.Node).DependsOn = []jobsetv1alpha2.DependsOn{{Name: "launcher", Status: jobsetv1alpha2.DependencyReady}}
			})),
			want: `[spec.template.spec.replicatedJobs[0].dependsOn[0].name: Invalid value: "node": ` +
				`must name a replicated job listed before "dataset-initializer": JobSet refuses the JobSet of every TrainJob ` +
				`of this runtime ("DependsOn can't be set for the first ReplicatedJob"), ` +
				`spec.template.spec.replicatedJobs[2].dependsOn[0].name: Invalid value: "launcher": ` +
				`must name a replicated job listed before "node": JobSet refuses the JobSet of every TrainJob ` +
				`of this runtime ("replicatedJob: node cannot depend on replicatedJob: launcher")]`,
		},
		"dependsOn the job itself": {
			rt: ctr(spec(func(s *trainer.TrainingRuntimeSpec) {
				utiltesting.Job(s.Template.Spec.ReplicatedJobs, utiltesting.Node).DependsOn = []jobsetv1alpha2.DependsOn{{Name: "node", Status: jobsetv1alpha2.DependencyReady}}
			})),
			want: `spec.template.spec.replicatedJobs[2].dependsOn[0].name: Invalid value: "node": ` +
				`must name a replicated job listed before "node": JobSet accepts a replicated job that waits for itself, ` +
				`and never creates its Jobs`,
		},
		"a framework policy without a trainer job": {
			rt: ctr(spec(func(s *trainer.TrainingRuntimeSpec) {
				s.Template.Spec.ReplicatedJobs = s.Template.Spec.ReplicatedJobs[:2]
			})),
			want: "spec.template.spec.replicatedJobs: Required value: the torch policy needs a replicated job labelled trainer.kubeflow.org/trainjob-ancestor-step: trainer",
		},
		"plain ML without a trainer job": {
			rt: ctr(func() trainer.TrainingRuntimeSpec {
				s := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
				s.Template.Spec.ReplicatedJobs = s.Template.Spec.ReplicatedJobs[:2]
				return s
			}()),
		},
		"a JobSet TTL": {
			rt:   ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) })),
			want: jobSetTTLRefusal,
		},
		"an update keeping a stored JobSet TTL": {
			rt:  ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) })),
			old: ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) })),
		},
		"an update changing a stored JobSet TTL": {
			rt:   ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](0) })),
			old:  ctr(spec(func(s *trainer.TrainingRuntimeSpec) { s.Template.Spec.TTLSecondsAfterFinished = ptr.To[int32](60) })),
			want: jobSetTTLRefusal,
		},
		"runtime knobs": {
			rt: utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Annotation("ttl.gantry.dev/seconds-after-finished", "-1").
				Annotation("elastic.gantry.dev/target-nodes", "2").Obj(),
			want: "[metadata.annotations[elastic.gantry.dev/target-nodes]: Forbidden: is set on a TrainJob, not on its runtime, " +
				`metadata.annotations[ttl.gantry.dev/seconds-after-finished]: Invalid value: "-1": must be an integer from 0 to 2147483647, ` +
				"metadata.annotations[elastic.gantry.dev/target-nodes]: Forbidden: needs elastic.gantry.dev/min-nodes and elastic.gantry.dev/max-nodes: the TrainJob is not elastic]",
		},
		"two gang schedulers": {
			rt:   utiltesting.MakeTrainingRuntimeWrapper("ns", "rt").Spec(bothGangs).Obj(),
			want: "spec.podGroupPolicy: Forbidden: only one of coscheduling and volcano can be configured",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if errs := ValidateRuntime(tc.rt, tc.old); len(errs) > 0 {
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
			if err := ref.CheckSupported(tj); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("CheckSupported() (-want,+got):\n%s", diff)
			}
		})
	}
}
