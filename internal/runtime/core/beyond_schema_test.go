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
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestValidateTrainJob(t *testing.T) {
	long := strings.Repeat("a", 64)
	patch := func(job string, spec trainer.PodSpecPatch) *trainer.TrainJob {
		return utiltesting.MakeTrainJobWrapper("ns", "tj").
			RuntimePatches(utiltesting.MakeRuntimePatchWrapper("example.com/m").PodSpec(job, spec).Obj()).Obj()
	}
	withTrainer := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(2).Obj()).Obj()
	withInitializer := utiltesting.MakeTrainJobWrapper("ns", "tj").
		DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("hf://d/d")}).Obj()
	withDeadline := utiltesting.MakeTrainJobWrapper("ns", "tj").ActiveDeadlineSeconds(60).Obj()
	plain := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	const patchPath = "spec.runtimePatches[0].trainingRuntimeSpec.template.spec.replicatedJobs[0]"
	cases := map[string]struct {
		// old makes the write an update.
		old, tj *trainer.TrainJob
		want    string
	}{
		"a plain TrainJob": {tj: plain},
		"no spec": {
			tj:   &trainer.TrainJob{},
			want: "spec: Required value: a TrainJob needs a spec, with at least spec.runtimeRef",
		},
		"an update without spec": {
			old:  plain,
			tj:   &trainer.TrainJob{},
			want: "spec: Required value: a TrainJob needs a spec, with at least spec.runtimeRef",
		},
		"trainer added after creation": {
			old:  plain,
			tj:   withTrainer,
			want: "spec.trainer: Invalid value: field is immutable: it cannot be added or removed after the TrainJob is created",
		},
		"trainer removed": {
			old:  withTrainer,
			tj:   plain,
			want: "spec.trainer: Invalid value: field is immutable: it cannot be added or removed after the TrainJob is created",
		},
		"initializer added after creation": {
			old:  plain,
			tj:   withInitializer,
			want: "spec.initializer: Invalid value: field is immutable: it cannot be added or removed after the TrainJob is created",
		},
		"initializer removed": {
			old:  withInitializer,
			tj:   plain,
			want: "spec.initializer: Invalid value: field is immutable: it cannot be added or removed after the TrainJob is created",
		},
		"activeDeadlineSeconds added after creation": {
			old: plain,
			tj:  withDeadline,
			want: "spec.activeDeadlineSeconds: Invalid value: field is immutable: it cannot be added or removed after the " +
				"TrainJob is created",
		},
		"activeDeadlineSeconds removed": {
			old: withDeadline,
			tj:  plain,
			want: "spec.activeDeadlineSeconds: Invalid value: field is immutable: it cannot be added or removed after the " +
				"TrainJob is created",
		},
		// A change of a field both carry is the schema's `self == oldSelf` rule's.
		"trainer changed": {old: withTrainer, tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(3).Obj()).Obj()},
		"a patch of a replicated job of 63 characters": {tj: patch(long[:63], trainer.PodSpecPatch{})},
		"a patch of a replicated job of 64 characters": {
			tj: patch(long, trainer.PodSpecPatch{}),
			want: patchPath + `.name: Invalid value: "` + long + `": must be no more than 63 characters: ` +
				"JobSet names the replicated job's Jobs <TrainJob name>-<replicated job>-<index>, which must be DNS labels (RFC 1035)",
		},
		"patches of containers and init containers of 64 characters": {
			tj: patch("node", trainer.PodSpecPatch{
				InitContainers: []trainer.ContainerPatch{{Name: long[:63]}, {Name: long}},
				Containers:     []trainer.ContainerPatch{{Name: long}},
			}),
			want: "[" + patchPath + `.template.spec.template.spec.initContainers[1].name: Invalid value: "` + long +
				`": must be no more than 63 characters: a container's name is a DNS label (RFC 1123), ` +
				patchPath + `.template.spec.template.spec.containers[0].name: Invalid value: "` + long +
				`": must be no more than 63 characters: a container's name is a DNS label (RFC 1123)]`,
		},
		// A patch stored with a long name (admitted by Kubeflow Trainer, or before this check) does
		// not block updates that leave it as it is, such as Kueue's writes of its own patch.
		"an update keeping a patch with a long name": {
			old: patch(long, trainer.PodSpecPatch{}),
			tj: func() *trainer.TrainJob {
				tj := patch(long, trainer.PodSpecPatch{})
				tj.Spec.RuntimePatches[0].Time = nil
				tj.Spec.RuntimePatches = append(tj.Spec.RuntimePatches, utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).Obj())
				return tj
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := ""
			if errs := ValidateTrainJob(tc.old, tc.tj); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateTrainJob() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestValidateRuntimeShape(t *testing.T) {
	cases := map[string]struct {
		json string
		want string
	}{
		"a runtime": {json: `{"kind": "ClusterTrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": [{"name": "node"}]}}}}`},
		"no spec": {
			json: `{"kind": "ClusterTrainingRuntime", "metadata": {"name": "rt"}}`,
			want: "spec: Required value: a runtime needs a spec, with at least spec.template",
		},
		"a null spec, which the apiserver drops": {
			json: `{"kind": "TrainingRuntime", "spec": null}`,
			want: "spec: Required value: a runtime needs a spec, with at least spec.template",
		},
		"no template": {
			json: `{"kind": "TrainingRuntime", "spec": {"mlPolicy": {"numNodes": 1}}}`,
			want: "spec.template: Required value: a runtime needs a template, the JobSet its TrainJobs run",
		},
		// The typed runtime is the same as without template; ValidateRuntime refuses it for
		// having no replicated job, at spec.template.spec.replicatedJobs.
		"an empty template": {json: `{"kind": "TrainingRuntime", "spec": {"template": {"spec": {"replicatedJobs": []}}}}`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			shape, err := RuntimeShapeOf([]byte(tc.json))
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if errs := ValidateRuntimeShape(shape); len(errs) > 0 {
				got = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ValidateRuntimeShape() (-want,+got):\n%s", diff)
			}
		})
	}
	if _, err := RuntimeShapeOf([]byte(`[1]`)); err == nil {
		t.Error("RuntimeShapeOf read a list as a runtime")
	}
}
