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

package ref

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestSnapshotRoundTrip(t *testing.T) {
	rt := utiltesting.MakeClusterTrainingRuntimeWrapper("torch").Label("team", "a").
		Spec(utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	rt.ManagedFields = []metav1.ManagedFieldsEntry{{Manager: "kubectl"}}
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch").Obj()
	tj.UID = "uid-1"

	cm, err := NewSnapshot(tj, rt)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff("job-runtime-snapshot", cm.Name); diff != "" {
		t.Errorf("name (-want,+got):\n%s", diff)
	}
	got, err := DecodeSnapshot(cm, tj)
	if err != nil {
		t.Fatalf("DecodeSnapshot() error: %v", err)
	}
	want := rt.DeepCopy()
	want.ManagedFields = nil
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded runtime (-want,+got):\n%s", diff)
	}
	if len(rt.ManagedFields) != 1 {
		t.Error("NewSnapshot changed the runtime")
	}
}

func TestDecodeSnapshotRejects(t *testing.T) {
	rt := utiltesting.MakeTrainingRuntimeWrapper("ns", "torch").Obj()
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").RuntimeRef(trainer.TrainingRuntimeKind, "torch").Obj()
	tj.UID = "uid-1"
	good, err := NewSnapshot(tj, rt)
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		mutate  func(*corev1.ConfigMap, *trainer.TrainJob)
		wantErr string
	}{
		"owned by another object": {
			mutate:  func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.OwnerReferences[0].UID = "other" },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot is owned by another object",
		},
		"no owner": {
			mutate:  func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.OwnerReferences = nil },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot is owned by another object",
		},
		"owner reference not a controller": {
			mutate:  func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.OwnerReferences[0].Controller = nil },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot is owned by another object",
		},
		"without Gantry's label": {
			mutate: func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.Labels = nil },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot lacks the label trainer.kubeflow.org/trainjob-name=job " +
				"that Gantry puts on the snapshots it creates: someone else created it; delete it, then change the TrainJob (an annotation will do) to build it from its live runtime",
		},
		"labelled for another TrainJob": {
			mutate: func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.Labels[TrainJobNameLabel] = "other" },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot lacks the label trainer.kubeflow.org/trainjob-name=job " +
				"that Gantry puts on the snapshots it creates: someone else created it; delete it, then change the TrainJob (an annotation will do) to build it from its live runtime",
		},
		"missing key": {
			mutate:  func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { delete(cm.Data, SnapshotKey) },
			wantErr: `invalid runtime snapshot: ConfigMap job-runtime-snapshot has no "runtime" key`,
		},
		"not a runtime": {
			mutate:  func(cm *corev1.ConfigMap, _ *trainer.TrainJob) { cm.Data[SnapshotKey] = "spec: [1, 2" },
			wantErr: "invalid runtime snapshot: ConfigMap job-runtime-snapshot: error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'",
		},
		"another runtime name": {
			mutate: func(_ *corev1.ConfigMap, tj *trainer.TrainJob) { tj.Spec.RuntimeRef.Name = "other" },
			wantErr: `invalid runtime snapshot: the snapshot refers to the wrong runtime: TrainingRuntime.trainer.kubeflow.org "torch", ` +
				`the TrainJob references TrainingRuntime.trainer.kubeflow.org "other"`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cm, job := good.DeepCopy(), tj.DeepCopy()
			tc.mutate(cm, job)
			_, err := DecodeSnapshot(cm, job)
			if err == nil {
				t.Fatal("DecodeSnapshot() succeeded")
			}
			if !errors.Is(err, ErrInvalidSnapshot) {
				t.Errorf("error %v does not wrap ErrInvalidSnapshot", err)
			}
			if diff := cmp.Diff(tc.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
		})
	}
}
