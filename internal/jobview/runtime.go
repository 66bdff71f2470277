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

package jobview

import (
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Runtime is the summary of a TrainingRuntime or ClusterTrainingRuntime that practitioners
// choose from.
type Runtime struct {
	Kind      string `json:"kind"`
	Name      string `json:"name"`
	Namespace string `json:"namespace,omitempty"`
	Framework string `json:"framework,omitempty"`
	// Nodes is mlPolicy.numNodes, the default of a TrainJob's numNodes.
	Nodes int32 `json:"nodes"`
	// Device names the extended resource the trainer asks for per node ("nvidia.com/gpu"), empty
	// for CPU runtimes; DevicesPerNode how many.
	Device         string      `json:"device,omitempty"`
	DevicesPerNode int64       `json:"devicesPerNode,omitempty"`
	Image          string      `json:"image,omitempty"`
	Deprecated     bool        `json:"deprecated,omitempty"`
	Created        metav1.Time `json:"created"`
}

// Key indexes a runtime so that RuntimeKey finds it from a TrainJob.
func (r *Runtime) Key() string { return r.Kind + "/" + r.Namespace + "/" + r.Name }

// SummarizeRuntime reads a runtime's summary. obj is a *TrainingRuntime or *ClusterTrainingRuntime.
func SummarizeRuntime(obj metav1.Object, kind string, spec *trainer.TrainingRuntimeSpec) Runtime {
	r := Runtime{
		Kind: kind, Name: obj.GetName(), Namespace: obj.GetNamespace(), Nodes: 1,
		Framework:  obj.GetLabels()[trainer.FrameworkLabel],
		Deprecated: obj.GetLabels()[trainer.SupportLabel] == trainer.SupportDeprecated,
		Created:    metav1.NewTime(obj.GetCreationTimestamp().Time),
	}
	if spec.MLPolicy != nil && spec.MLPolicy.NumNodes != nil {
		r.Nodes = *spec.MLPolicy.NumNodes
	}
	if _, c := trainjob.TrainerNode(&spec.Template.Spec); c != nil {
		r.Image = c.Image
		r.Device, r.DevicesPerNode = device(c.Resources)
	}
	return r
}

// device returns the first extended resource of a container (by name, so the answer is stable)
// and its count.
func device(r corev1.ResourceRequirements) (string, int64) {
	list := r.Limits
	if len(list) == 0 {
		list = r.Requests
	}
	var names []string
	for name := range list {
		if isDevice(name) {
			names = append(names, string(name))
		}
	}
	if len(names) == 0 {
		return "", 0
	}
	slices.Sort(names)
	q := list[corev1.ResourceName(names[0])]
	return names[0], q.Value()
}

func isDevice(name corev1.ResourceName) bool {
	switch name {
	case corev1.ResourceCPU, corev1.ResourceMemory, corev1.ResourceEphemeralStorage, corev1.ResourceStorage:
		return false
	}
	return !strings.HasPrefix(string(name), corev1.ResourceHugePagesPrefix)
}
