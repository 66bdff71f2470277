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

package core

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

// validateKnobs checks tj's Gantry annotations over the defaults of its runtime rt; on create,
// also that an elastic TrainJob runs torch and starts within its node range.
func validateKnobs(old, tj *trainer.TrainJob, rt client.Object) field.ErrorList {
	var oldAnnotations map[string]string
	if old != nil {
		oldAnnotations = old.Annotations
	}
	defaults := knobs.Defaults(rt.GetAnnotations())
	errs := knobs.ValidateTrainJob(oldAnnotations, tj.Annotations, defaults)
	if old != nil || len(errs) > 0 {
		return errs
	}
	elastic, _ := knobs.ParseElastic(knobs.Effective(tj.Annotations, defaults))
	if elastic == nil {
		return nil
	}
	spec, err := ref.RuntimeSpec(rt)
	if err != nil {
		return field.ErrorList{field.InternalError(field.NewPath("spec", "runtimeRef"), err)}
	}
	if tj.Spec.Trainer == nil {
		return field.ErrorList{field.Required(field.NewPath("spec", "trainer"), "an elastic TrainJob sets its trainer")}
	}
	if spec.MLPolicy == nil || spec.MLPolicy.Torch == nil {
		return field.ErrorList{field.Forbidden(knobs.Path(knobs.ElasticMinNodes),
			fmt.Sprintf("elastic training runs torchrun: runtime %q has no torch policy", rt.GetName()))}
	}
	numNodes := ptr.Deref(spec.MLPolicy.NumNodes, 1)
	if tj.Spec.Trainer != nil && tj.Spec.Trainer.NumNodes != nil {
		numNodes = *tj.Spec.Trainer.NumNodes
	}
	return elastic.ValidateNodes(numNodes, field.NewPath("spec", "trainer", "numNodes"))
}
