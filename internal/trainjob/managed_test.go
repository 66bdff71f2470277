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

package trainjob

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestSizeOwner(t *testing.T) {
	cases := map[string]struct {
		tj          *trainer.TrainJob
		hasWorkload bool
		want        string
		wantGantry  bool
	}{
		"the user's alone": {tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Obj(), wantGantry: true},
		"managedBy naming the controller Gantry stands in for": {
			tj: utiltesting.MakeTrainJobWrapper("ns", "tj").ManagedBy(trainer.ManagedByTrainJobController).Obj(), wantGantry: true},
		"MultiKueue's on the manager cluster": {
			tj:   utiltesting.MakeTrainJobWrapper("ns", "tj").ManagedBy(trainer.ManagedByMultiKueue).Label(QueueLabel, "q").Obj(),
			want: "kueue.x-k8s.io/multikueue (spec.managedBy)"},
		"in a Kueue queue": {tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Label(QueueLabel, "q").Obj(),
			want: `Kueue (queue "q")`, wantGantry: true},
		"an empty queue label is no queue": {tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Label(QueueLabel, "").Obj(), wantGantry: true},
		"MultiKueue's copy on a worker": {tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Label(PrebuiltWorkloadLabel, "wl").Obj(),
			want: `Kueue (MultiKueue workload "wl")`, wantGantry: true},
		// Kueue v0.19's WorkloadIdentifierAnnotations (on by default) moves the name to an
		// annotation of the same key.
		"MultiKueue's copy on a worker, v0.19: the workload in an annotation": {
			tj:   utiltesting.MakeTrainJobWrapper("ns", "tj").Annotation(PrebuiltWorkloadLabel, "wl").Label(MultiKueueOriginLabel, "multikueue").Obj(),
			want: `Kueue (MultiKueue workload "wl")`, wantGantry: true},
		"MultiKueue's copy on a worker, by its origin alone": {
			tj:   utiltesting.MakeTrainJobWrapper("ns", "tj").Label(MultiKueueOriginLabel, "multikueue").Obj(),
			want: `Kueue (MultiKueue, from "multikueue")`, wantGantry: true},
		"a Workload without a queue label": {tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Obj(), hasWorkload: true,
			want: "Kueue (a Workload of this TrainJob)", wantGantry: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, SizeOwner(tc.tj, tc.hasWorkload)); diff != "" {
				t.Errorf("SizeOwner (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantGantry, ManagedByGantry(tc.tj)); diff != "" {
				t.Errorf("ManagedByGantry (-want +got):\n%s", diff)
			}
		})
	}
}
