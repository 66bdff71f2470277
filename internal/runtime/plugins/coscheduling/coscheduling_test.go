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

package coscheduling

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestPodGroup(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(100).Torch(&trainer.TorchMLPolicySource{}).
		Coscheduling(&trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](100)}).Obj()
	for i := range spec.Template.Spec.ReplicatedJobs {
		spec.Template.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec.Containers[0].Resources.Requests =
			corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}
	}
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	info, err := core.NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := &CoScheduling{}
	if err := p.EnforcePodGroupPolicy(info, tj); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]string{"scheduling.x-k8s.io/pod-group": "tj"}, info.Scheduler.PodLabels); diff != "" {
		t.Errorf("pod labels (-want,+got):\n%s", diff)
	}
	objs, err := p.Build(context.Background(), info, tj)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Mode != apply.UnlessRunning {
		t.Fatalf("Build() = %v, want one PodGroup applied unless running", objs)
	}
	pg := objs[0].Object.(*schedulerpluginsv1alpha1.PodGroup)
	// 100 nodes and 2 initializers, one CPU each.
	want := schedulerpluginsv1alpha1.PodGroupSpec{
		MinMember:              102,
		MinResources:           corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("102")},
		ScheduleTimeoutSeconds: ptr.To[int32](100),
	}
	if diff := cmp.Diff(want, pg.Spec, cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })); diff != "" {
		t.Errorf("PodGroup spec (-want,+got):\n%s", diff)
	}
}
