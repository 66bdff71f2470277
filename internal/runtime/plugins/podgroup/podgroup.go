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

// Package podgroup holds what the gang-scheduling plugins share: the size and metadata of a
// TrainJob's PodGroup, how it is written, and the watches that re-render suspended TrainJobs when
// the cluster changes the size of their pods.
package podgroup

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// Gang is what every PodGroup of a TrainJob holds, whichever scheduler reads it.
type Gang struct {
	// Meta names the PodGroup after the TrainJob, in its namespace, owned by it.
	Meta metav1.ObjectMeta
	// Members is every pod of every replicated job, initializers included.
	Members int32
	// Resources is what they request together.
	Resources corev1.ResourceList
}

// GangOf sizes tj's gang from its final PodSets.
func GangOf(info *runtime.Info, tj *trainer.TrainJob) Gang {
	members, resources := info.GangSize()
	return Gang{Meta: runtime.OwnedBy(tj, tj.Name), Members: members, Resources: resources}
}

// Desired is how a PodGroup is written: like the JobSet, never changed while the TrainJob runs
// (the scheduler has admitted the gang by then).
func Desired(pg client.Object) apply.Desired {
	return apply.Desired{Object: pg, Mode: apply.UnlessRunning}
}
