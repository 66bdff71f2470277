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

package volcano

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestValidate(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	spec.PodGroupPolicy = &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{Volcano: &trainer.VolcanoPodGroupPolicySource{}}}
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Template.Spec.PriorityClassName = "system-node-critical"
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Spec.Template.Spec.PriorityClassName = "batch-low"
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.PriorityClassName = "missing"
	cases := map[string]struct {
		classes map[string]bool
		queue   *string
		want    string
	}{
		"priority classes not read: not checked": {},
		"existing and built-in classes pass, a missing one fails": {
			classes: map[string]bool{"batch-low": true},
			want:    `spec.templateSpec.priorityClassName: Invalid value: "missing": PriorityClass "missing" doesn't exist: replicated job "node" uses it`,
		},
		"an empty queue in the runtime": {
			classes: map[string]bool{"batch-low": true, "missing": true},
			queue:   new(string),
			want:    `spec.runtimeRef: Invalid value: "": Volcano queue name must not be empty (annotation scheduling.volcano.sh/queue-name)`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s := *spec.DeepCopy()
			if tc.queue != nil {
				s.Template.Metadata.Annotations = map[string]string{"scheduling.volcano.sh/queue-name": *tc.queue}
			}
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			info, err := core.NewInfo(tj, "rt", &s, nil)
			if err != nil {
				t.Fatal(err)
			}
			info.Observed.PriorityClasses = tc.classes
			_, errs := (&Volcano{}).Validate(info, nil, tj)
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
