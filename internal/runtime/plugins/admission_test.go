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

package plugins

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestAdmissionOfWhatCanNeverRun goes through core.Runtime.ValidateObjects, which gives the
// plugins the final counts: a name JobSet would refuse on every build is refused at
// metadata.name with this runtime's limit, and a trainer without pods is accepted with a warning.
func TestAdmissionOfWhatCanNeverRun(t *testing.T) {
	rt, err := NewRuntime(framework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	withInitializers := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
	trainerOnly := utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()
	trainerOnly.Template.Spec.ReplicatedJobs = trainerOnly.Template.Spec.ReplicatedJobs[2:]
	nonIndexed := *trainerOnly.DeepCopy()
	nonIndexed.Template.Spec.ReplicatedJobs[0].Template.Spec.CompletionMode = ptr.To(batchv1.NonIndexedCompletion)
	named := func(n int) string { return "j" + strings.Repeat("a", n-1) }
	cases := map[string]struct {
		spec         trainer.TrainingRuntimeSpec
		name         string
		numNodes     int32
		wantErr      string
		wantWarnings admission.Warnings
	}{
		"33 characters with initializer jobs": {spec: withInitializers, name: named(33), numNodes: 2},
		"34 characters with initializer jobs": {spec: withInitializers, name: named(34), numNodes: 2,
			wantErr: `metadata.name: Invalid value: "` + named(34) + `": must be no more than 33 characters with runtime "torch": ` +
				`JobSet names the pods of replicated job "dataset-initializer" <name>-dataset-initializer-0-0-xxxxx, ` +
				`DNS labels (RFC 1035) of at most 63 characters, and refuses the JobSet of a longer name ` +
				`("JobSet name is too long, pod names generated for this JobSet will exceed 63 characters")`},
		"48 characters, two nodes": {spec: trainerOnly, name: named(48), numNodes: 2},
		"48 characters, eleven nodes": {spec: trainerOnly, name: named(48), numNodes: 11,
			wantErr: `metadata.name: Invalid value: "` + named(48) + `": must be no more than 47 characters with runtime "torch": ` +
				`JobSet names the pods of replicated job "node" <name>-node-0-10-xxxxx, ` +
				`DNS labels (RFC 1035) of at most 63 characters, and refuses the JobSet of a longer name ` +
				`("JobSet name is too long, pod names generated for this JobSet will exceed 63 characters")`},
		"57 characters, Jobs not indexed": {spec: nonIndexed, name: named(57), numNodes: 2,
			wantErr: `metadata.name: Invalid value: "` + named(57) + `": must be no more than 56 characters with runtime "torch": ` +
				`JobSet names the Jobs of replicated job "node" <name>-node-0, ` +
				`DNS labels (RFC 1035) of at most 63 characters, and refuses the JobSet of a longer name ` +
				`("JobSet name is too long, job names generated for this JobSet will exceed 63 characters")`},
		"no nodes": {spec: trainerOnly, name: "empty", numNodes: 0,
			wantWarnings: admission.Warnings{`replicated job "node" runs no pods (numNodes is 0): the TrainJob will complete without training`}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ctr := utiltesting.MakeClusterTrainingRuntimeWrapper("torch").Spec(tc.spec).Obj()
			tj := utiltesting.MakeTrainJobWrapper("ns", tc.name).RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch").
				Trainer(utiltesting.MakeTrainerWrapper().NumNodes(tc.numNodes).Obj()).Obj()
			warnings, errs := rt.ValidateObjects(nil, tj, ctr, nil)
			gotErr := ""
			if len(errs) > 0 {
				gotErr = errs.ToAggregate().Error()
			}
			if diff := cmp.Diff(tc.wantErr, gotErr); diff != "" {
				t.Errorf("errors (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWarnings, warnings); diff != "" {
				t.Errorf("warnings (-want,+got):\n%s", diff)
			}
		})
	}
}
