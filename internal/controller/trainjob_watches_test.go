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

package controller

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/event"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestNotOnlyTrainerStatus(t *testing.T) {
	base := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	base.ResourceVersion = "1"
	progress := func(p int32) *trainer.TrainJobTrainerStatus {
		return &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To(p), LastUpdatedTime: metav1.NewTime(time.Unix(int64(p), 0))}
	}
	cases := map[string]struct {
		change func(*trainer.TrainJob)
		want   bool
	}{
		"progress reported":  {change: func(tj *trainer.TrainJob) { tj.Status.TrainerStatus = progress(2) }, want: false},
		"progress cleared":   {change: func(tj *trainer.TrainJob) { tj.Status.TrainerStatus = nil }, want: false},
		"nothing but the rv": {change: func(*trainer.TrainJob) {}, want: true},
		"progress and a condition": {change: func(tj *trainer.TrainJob) {
			tj.Status.TrainerStatus = progress(2)
			tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
		}, want: true},
		"a spec change": {change: func(tj *trainer.TrainJob) { tj.Spec.Suspend = ptr.To(true) }, want: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			oldTJ := base.DeepCopy()
			oldTJ.Status.TrainerStatus = progress(1)
			newTJ := oldTJ.DeepCopy()
			newTJ.ResourceVersion = "2"
			tc.change(newTJ)
			got := notOnlyTrainerStatus().Update(event.UpdateEvent{ObjectOld: oldTJ, ObjectNew: newTJ})
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Update (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestUnfinishedTrainJobs(t *testing.T) {
	s, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	done := utiltesting.MakeTrainJobWrapper("ns", "done").Obj()
	done.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		utiltesting.MakeTrainJobWrapper("ns", "running").Obj(),
		utiltesting.MakeTrainJobWrapper("other", "suspended").Suspend(true).Obj(),
		utiltesting.MakeTrainJobWrapper("ns", "kueue").ManagedBy("kueue.x-k8s.io/multikueue").Obj(),
		done,
	).Build()
	r := &TrainJobReconciler{client: c}
	var got []types.NamespacedName
	for _, req := range r.unfinishedTrainJobs(context.Background()) {
		got = append(got, req.NamespacedName)
	}
	want := []types.NamespacedName{{Namespace: "ns", Name: "running"}, {Namespace: "other", Name: "suspended"}}
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(func(a, b types.NamespacedName) bool { return a.String() < b.String() })); diff != "" {
		t.Errorf("unfinishedTrainJobs (-want,+got):\n%s", diff)
	}
}
