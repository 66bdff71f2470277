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
	"encoding/json"
	"errors"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// Snapshot ConfigMap layout.
const (
	SnapshotSuffix = "-runtime-snapshot"
	SnapshotKey    = "runtime"
	// SnapshotKnobsKey holds the runtime's Gantry annotations (internal/knobs) as JSON: the
	// TrainJob's defaults for its whole life, read without decoding the runtime, and immutable
	// like the rest of the data (annotations of the ConfigMap could be edited).
	SnapshotKnobsKey = "knobs"
)

// TrainJobNameLabel is put on every ConfigMap and Secret Gantry creates, the snapshot included,
// with the TrainJob's name, so the controller caches only those.
const TrainJobNameLabel = "trainer.kubeflow.org/trainjob-name"

// SnapshotName is the name of tj's runtime snapshot ConfigMap.
func SnapshotName(tj *trainer.TrainJob) string {
	return tj.Name + SnapshotSuffix
}

// NewSnapshot returns the ConfigMap that freezes the runtime tj started with: later reconciles
// build from it, so editing or deleting the runtime never changes a running job.
func NewSnapshot(tj *trainer.TrainJob, rt client.Object) (*corev1.ConfigMap, error) {
	cm := NewSnapshotSkeleton(tj)
	if err := FillSnapshot(cm, rt); err != nil {
		return nil, err
	}
	return cm, nil
}

// FillSnapshot writes the runtime's YAML into cm. Encoding YAML is most of the cost of a build,
// so the controller does it only when the snapshot does not exist yet, and once per runtime
// version (runtimeYAML).
func FillSnapshot(cm *corev1.ConfigMap, rt client.Object) error {
	data, err := runtimeYAML(rt)
	if err != nil {
		return err
	}
	cm.Data = map[string]string{SnapshotKey: data}
	return nil
}

// FillSnapshotKnobs adds the runtime's knobs to cm's data, when it has any.
func FillSnapshotKnobs(cm *corev1.ConfigMap, knobs map[string]string) error {
	if len(knobs) == 0 {
		return nil
	}
	data, err := json.Marshal(knobs)
	if err != nil {
		return fmt.Errorf("encoding the runtime's knobs: %w", err)
	}
	if cm.Data == nil {
		cm.Data = map[string]string{}
	}
	cm.Data[SnapshotKnobsKey] = string(data)
	return nil
}

// SnapshotKnobs reads the knobs FillSnapshotKnobs kept, from a snapshot of tj as Gantry made it
// (owned by tj and immutable); nil otherwise.
func SnapshotKnobs(cm *corev1.ConfigMap, tj *trainer.TrainJob) map[string]string {
	data, ok := cm.Data[SnapshotKnobsKey]
	if CheckSnapshot(cm, tj) != nil || !ok {
		return nil
	}
	var knobs map[string]string
	if json.Unmarshal([]byte(data), &knobs) != nil {
		return nil
	}
	return knobs
}

// NewSnapshotSkeleton is the snapshot without its data. It is immutable: once written, nobody can
// change what a running TrainJob is rebuilt from.
func NewSnapshotSkeleton(tj *trainer.TrainJob) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: runtime.OwnedBy(tj, SnapshotName(tj)),
		Immutable:  ptr.To(true),
	}
	cm.Labels = map[string]string{TrainJobNameLabel: tj.Name}
	return cm
}

func runtimeKind(rt client.Object) string {
	if _, ok := rt.(*trainer.TrainingRuntime); ok {
		return trainer.TrainingRuntimeKind
	}
	return trainer.ClusterTrainingRuntimeKind
}

// ErrInvalidSnapshot wraps every reason a snapshot cannot be used.
var ErrInvalidSnapshot = errors.New("invalid runtime snapshot")

// CheckSnapshot reports why cm is not a snapshot Gantry made for tj: it must be controlled by tj
// (its UID), carry Gantry's label with tj's name, and be immutable, as Gantry creates it. Anyone
// who can create ConfigMaps in the namespace could otherwise choose what a TrainJob is built
// from, bypassing its runtime: a mutable one was written by someone else (or edited after a
// delete), and one without the label was not created by Gantry, whose cache cannot even see it.
func CheckSnapshot(cm *corev1.ConfigMap, tj *trainer.TrainJob) error {
	owner := metav1.GetControllerOf(cm)
	if owner == nil || owner.UID != tj.UID {
		return fmt.Errorf("%w: ConfigMap %s is owned by another object", ErrInvalidSnapshot, cm.Name)
	}
	if cm.Labels[TrainJobNameLabel] != tj.Name {
		return fmt.Errorf("%w: ConfigMap %s lacks the label %s=%s that Gantry puts on the snapshots it creates: someone else created it; "+
			"delete it, then change the TrainJob (an annotation will do) to build it from its live runtime", ErrInvalidSnapshot, cm.Name, TrainJobNameLabel, tj.Name)
	}
	if !ptr.Deref(cm.Immutable, false) {
		return fmt.Errorf("%w: ConfigMap %s is mutable, and Gantry creates snapshots immutable; delete it to rebuild the TrainJob from its live runtime", ErrInvalidSnapshot, cm.Name)
	}
	return nil
}

// DecodeSnapshot returns the runtime frozen in cm, after checking that it is Gantry's snapshot of
// tj (CheckSnapshot) and holds the runtime tj references.
func DecodeSnapshot(cm *corev1.ConfigMap, tj *trainer.TrainJob) (client.Object, error) {
	if err := CheckSnapshot(cm, tj); err != nil {
		return nil, err
	}
	data, ok := cm.Data[SnapshotKey]
	if !ok {
		return nil, fmt.Errorf("%w: ConfigMap %s has no %q key", ErrInvalidSnapshot, cm.Name, SnapshotKey)
	}
	rt, err := NewRuntimeObject(tj)
	if err != nil {
		return nil, err
	}
	if err := yaml.UnmarshalStrict([]byte(data), rt); err != nil {
		return nil, fmt.Errorf("%w: ConfigMap %s: %w", ErrInvalidSnapshot, cm.Name, err)
	}
	gvk := rt.GetObjectKind().GroupVersionKind()
	if rt.GetName() != tj.Spec.RuntimeRef.Name || gvk.GroupKind() != RuntimeGroupKind(tj) {
		return nil, fmt.Errorf("%w: the snapshot refers to the wrong runtime: %s %q, the TrainJob references %s %q",
			ErrInvalidSnapshot, gvk.GroupKind(), rt.GetName(), RuntimeGroupKind(tj), tj.Spec.RuntimeRef.Name)
	}
	return rt, nil
}
