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

package jobset

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func newInfo(t *testing.T, spec trainer.TrainingRuntimeSpec, tj *trainer.TrainJob) *runtime.Info {
	t.Helper()
	info, err := core.NewInfo(tj, "rt", &spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	return info
}

func TestPreBuildSyncEndpoints(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Replicas = 2 // not an overridden step once its label is gone
	utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Labels = nil
	spec.Template.Spec.Network = &jobsetv1alpha2.Network{Subdomain: "sub"}
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	info := newInfo(t, spec, tj)
	info.PodSetByName("node").Count = 2
	if err := (&JobSet{}).PreBuildSync(info, tj); err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, ps := range info.PodSets {
		got[ps.Name] = ps.Endpoints
	}
	want := map[string][]string{
		"dataset-initializer": {"tj-dataset-initializer-0-0.sub", "tj-dataset-initializer-1-0.sub"},
		"model-initializer":   {"tj-model-initializer-0-0.sub"},
		"node":                {"tj-node-0-0.sub", "tj-node-0-1.sub"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("endpoints (-want,+got):\n%s", diff)
	}
}

func TestBuild(t *testing.T) {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	spec.Template.Metadata.Labels = map[string]string{"from": "runtime"}
	spec.Template.Spec.SuccessPolicy = &jobsetv1alpha2.SuccessPolicy{Operator: jobsetv1alpha2.OperatorAll, TargetReplicatedJobs: []string{"node"}}
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(true).
		Trainer(utiltesting.MakeTrainerWrapper().Container("img:2", []string{"run"}, []string{"--x"}).Obj()).Obj()
	tj.UID = "uid-1"
	info := newInfo(t, spec, tj)
	ps := info.PodSetByName("node")
	ps.Count = 3
	ps.Containers[0].Env = runtime.UpsertEnv(ps.Containers[0].Env, corev1.EnvVar{Name: "ADDED", Value: "1"})
	ps.InitContainers = append(ps.InitContainers, runtime.Container{Name: "installer", Image: "installer:1"})
	ps.Volumes = runtime.UpsertVolumes(ps.Volumes, corev1.Volume{Name: "extra"})
	info.Scheduler.PodLabels["group"] = "tj"

	objs, err := (&JobSet{}).Build(context.Background(), info, tj)
	if err != nil {
		t.Fatal(err)
	}
	if len(objs) != 1 || objs[0].Mode != apply.UnlessRunning {
		t.Fatalf("Build() = %v, want one JobSet applied unless running", objs)
	}
	js := objs[0].Object.(*jobsetv1alpha2.JobSet)

	want := spec.Template.Spec.DeepCopy()
	want.Suspend = ptr.To(true)
	for i := range want.ReplicatedJobs {
		rj := &want.ReplicatedJobs[i]
		rj.Template.Spec.Parallelism = ptr.To[int32](1)
		rj.Template.Spec.Completions = ptr.To[int32](1)
		rj.Template.Spec.Template.Labels = map[string]string{"group": "tj"}
	}
	node := utiltesting.Job(want.ReplicatedJobs, utiltesting.Node)
	node.Template.Spec.Parallelism = ptr.To[int32](3)
	node.Template.Spec.Completions = ptr.To[int32](3)
	pod := &node.Template.Spec.Template.Spec
	pod.Containers[0].Image = "img:2"
	pod.Containers[0].Command = []string{"run"}
	pod.Containers[0].Args = []string{"--x"}
	pod.Containers[0].Env = []corev1.EnvVar{{Name: "ADDED", Value: "1"}}
	pod.InitContainers = []corev1.Container{{Name: "installer", Image: "installer:1"}}
	pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "extra"})
	if diff := cmp.Diff(*want, js.Spec); diff != "" {
		t.Errorf("JobSet spec (-want,+got):\n%s", diff)
	}
	wantMeta := metav1.ObjectMeta{
		Name: "tj", Namespace: "ns", Labels: map[string]string{"from": "runtime"},
		OwnerReferences: []metav1.OwnerReference{{
			APIVersion: "trainer.kubeflow.org/v1alpha1", Kind: "TrainJob", Name: "tj", UID: "uid-1",
			Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true),
		}},
	}
	if diff := cmp.Diff(wantMeta, js.ObjectMeta); diff != "" {
		t.Errorf("JobSet metadata (-want,+got):\n%s", diff)
	}
	if diff := cmp.Diff("img:2", utiltesting.Job(info.Template.ReplicatedJobs, utiltesting.Node).Template.Spec.Template.Spec.Containers[0].Image); diff == "" {
		t.Error("Build changed Info.Template instead of a copy")
	}
}

func TestStatus(t *testing.T) {
	t0 := metav1.Now()
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
	tj.Generation = 3
	tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobSuspended, Status: metav1.ConditionFalse, Reason: "Resumed"}}
	tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](50), LastUpdatedTime: t0}
	js := &jobsetv1alpha2.JobSet{Status: jobsetv1alpha2.JobSetStatus{
		Conditions: []metav1.Condition{
			{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully", LastTransitionTime: t0},
			{Type: "Failed", Status: metav1.ConditionFalse, Reason: "x"},
			{Type: "StartupPolicyCompleted", Status: metav1.ConditionTrue, Reason: "y"},
		},
		ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Succeeded: 2}},
	}}
	got, err := (&JobSet{}).Status(tj, js)
	if err != nil {
		t.Fatal(err)
	}
	want := &trainer.TrainJobStatus{
		Conditions: []metav1.Condition{
			tj.Status.Conditions[0],
			{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully", LastTransitionTime: t0, ObservedGeneration: 3},
		},
		JobsStatus: []trainer.JobStatus{{
			Name: "node", Ready: ptr.To[int32](0), Succeeded: ptr.To[int32](2), Failed: ptr.To[int32](0), Active: ptr.To[int32](0), Suspended: ptr.To[int32](0),
		}},
		TrainerStatus: tj.Status.TrainerStatus,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status() (-want,+got):\n%s", diff)
	}
	unchanged, err := (&JobSet{}).Status(tj, nil)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(&tj.Status, unchanged); diff != "" {
		t.Errorf("Status() without a JobSet (-want,+got):\n%s", diff)
	}
}

func TestValidatePatchChange(t *testing.T) {
	patch := func(sel string) trainer.RuntimePatch {
		return utiltesting.MakeRuntimePatchWrapper(trainer.RuntimePatchManagerKueue).
			PodSpec("node", trainer.PodSpecPatch{NodeSelector: map[string]string{"pool": sel}}).Obj()
	}
	job := func(suspend bool, p trainer.RuntimePatch) *trainer.TrainJob {
		return utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(suspend).RuntimePatches(p).Obj()
	}
	active := &jobsetv1alpha2.JobSet{Status: jobsetv1alpha2.JobSetStatus{ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Active: 1}}}}
	cases := map[string]struct {
		old, new *trainer.TrainJob
		jobSet   *jobsetv1alpha2.JobSet
		want     string
	}{
		"suspended before and after": {old: job(true, patch("a")), new: job(true, patch("b"))},
		"Kueue admission: patch and resume in one update": {
			old: job(true, patch("a")), new: job(false, patch("b")),
		},
		"suspending with a patch change": {old: job(false, patch("a")), new: job(true, patch("b"))},
		"running before and after": {
			old: job(false, patch("a")), new: job(false, patch("b")),
			want: "spec.runtimePatches: Forbidden: RuntimePatches can only be modified when the TrainJob is suspended before or after the update",
		},
		"only the admission time changed": {
			old: job(false, patch("a")),
			new: func() *trainer.TrainJob {
				j := job(false, patch("a"))
				j.Spec.RuntimePatches[0].Time = ptr.To(metav1.Now())
				return j
			}(),
		},
		"a Job is still active": {
			old: job(true, patch("a")), new: job(true, patch("b")), jobSet: active,
			want: "spec.runtimePatches: Forbidden: RuntimePatches cannot be modified when the JobSet's ReplicatedJob node is still active",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			info := newInfo(t, utiltesting.MakeTrainingRuntimeSpecWrapper().Obj(), tc.new)
			info.Observed.JobSet = tc.jobSet
			_, errs := (&JobSet{}).Validate(info, tc.old, tc.new)
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

func TestValidateInitializers(t *testing.T) {
	withoutModel := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	withoutModel.Template.Spec.ReplicatedJobs = withoutModel.Template.Spec.ReplicatedJobs[0:1]
	utiltesting.Job(withoutModel.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Template.Spec.Template.Spec.Containers[0].VolumeMounts = nil
	renamed := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(renamed.Template.Spec.ReplicatedJobs, utiltesting.ModelInitializer).Template.Spec.Template.Spec.Containers[0].Name = "loader"
	// Kubeflow Trainer finds the initializer jobs by their name, whatever their labels.
	unlabelled := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	for i := range unlabelled.Template.Spec.ReplicatedJobs[:2] {
		unlabelled.Template.Spec.ReplicatedJobs[i].Template.Labels = nil
	}
	otherName := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
	utiltesting.Job(otherName.Template.Spec.ReplicatedJobs, utiltesting.DatasetInitializer).Name = "fetch-data"
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").
		DatasetInitializer(&trainer.DatasetInitializer{StorageUri: ptr.To("hf://d/d")}).
		ModelInitializer(&trainer.ModelInitializer{StorageUri: ptr.To("hf://m/m")}).Obj()
	cases := map[string]struct {
		spec trainer.TrainingRuntimeSpec
		want string
	}{
		"both initializers present": {spec: utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()},
		"no model job, dataset container without the volume": {
			spec: withoutModel,
			want: `[spec.runtimeRef: Invalid value: {"name":"torch-distributed"}: must have volumeMount with name - initializer in container dataset-initializer of the dataset-initializer job, ` +
				`spec.runtimeRef: Invalid value: {"name":"torch-distributed"}: must have model-initializer job when trainJob is configured with input modelConfig]`,
		},
		"initializer jobs without the ancestor label, found by name": {spec: unlabelled},
		"a labelled dataset job of another name": {
			spec: otherName,
			want: `spec.runtimeRef: Invalid value: {"name":"torch-distributed"}: must have dataset-initializer job when trainJob is configured with input datasetConfig`,
		},
		"model job without its container": {
			spec: renamed,
			want: `spec.runtimeRef: Invalid value: {"name":"torch-distributed"}: must have container with name - model-initializer in the model-initializer job`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, errs := (&JobSet{}).Validate(newInfo(t, tc.spec, tj), nil, tj)
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

func TestSizeLimits(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Trainer(utiltesting.MakeTrainerWrapper().NumNodes(100_001).Obj()).Obj()
	info := newInfo(t, utiltesting.MakeTrainingRuntimeSpecWrapper().Obj(), tj)
	_, errs := (&JobSet{}).Validate(info, nil, tj)
	if diff := cmp.Diff("spec.trainer.numNodes: Invalid value: 100001: must be at most 100000, the most pods an Indexed Job runs",
		errs.ToAggregate().Error()); diff != "" {
		t.Errorf("Validate() (-want,+got):\n%s", diff)
	}
	cases := map[string]struct {
		replicas, count int32
		want            string
	}{
		"at the limit": {replicas: 1, count: 100_000},
		"too many pods per Job": {
			replicas: 1, count: 100_001,
			want: `replicated job "node" would run 100001 pods per Job; an Indexed Job runs at most 100000`,
		},
		"too many pods in all": {
			replicas: 2_000_000, count: 1,
			want: `replicated job "node" would run 2000000 pods (2000000 replicas of 1); the limit is 1000000`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ps := info.PodSetByName("node")
			ps.Replicas, ps.Count = tc.replicas, tc.count
			got := ""
			if err := (&JobSet{}).PreBuildSync(info, tj); err != nil {
				got = err.Error()
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("PreBuildSync() (-want,+got):\n%s", diff)
			}
		})
	}
}
