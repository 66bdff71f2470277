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
	"math"

	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// MaxPodsPerJob is the most pods one Indexed Job may run (its completions limit); a larger count
// could never start.
const MaxPodsPerJob = 100_000

const nonNegative = "must be greater than or equal to 0"

// validateBuildable refuses what no TrainJob could build from the runtime, or JobSet would refuse
// on every TrainJob (counts, dependsOn), before any TrainJob is submitted.
func validateBuildable(spec *trainer.TrainingRuntimeSpec) field.ErrorList {
	var errs field.ErrorList
	jobsPath := field.NewPath("spec", "template", "spec", "replicatedJobs")
	jobs := spec.Template.Spec.ReplicatedJobs
	if len(jobs) == 0 {
		return field.ErrorList{field.Required(jobsPath, "a runtime needs at least one replicated job")}
	}
	earlier := sets.New[string]()
	hasTrainer := false
	for i, rj := range jobs {
		path := jobsPath.Index(i)
		hasTrainer = hasTrainer || rj.Template.Labels[trainer.AncestorLabel] == trainer.AncestorTrainer
		if rj.Replicas < 0 {
			errs = append(errs, field.Invalid(path.Child("replicas"), rj.Replicas, nonNegative))
		}
		jobSpec := rj.Template.Spec
		for _, c := range []struct {
			name  string
			value *int32
		}{{"parallelism", jobSpec.Parallelism}, {"completions", jobSpec.Completions}} {
			if c.value != nil && *c.value < 0 {
				errs = append(errs, field.Invalid(path.Child("template", "spec", c.name), *c.value, nonNegative))
			}
		}
		if pods := int64(rj.Replicas) * int64(ptr.Deref(jobSpec.Parallelism, 1)); pods > math.MaxInt32 {
			errs = append(errs, field.Invalid(path.Child("replicas"), rj.Replicas,
				fmt.Sprintf("the product of replicas and parallelism must not exceed %d", math.MaxInt32)))
		}
		for k, d := range rj.DependsOn {
			if !earlier.Has(d.Name) {
				errs = append(errs, field.Invalid(path.Child("dependsOn").Index(k).Child("name"), d.Name, dependsOnRefusal(i, rj.Name, d.Name)))
			}
		}
		earlier.Insert(rj.Name)
	}
	if p := spec.MLPolicy; p != nil {
		if n := ptr.Deref(p.NumNodes, 1); n < 0 || n > MaxPodsPerJob {
			detail := nonNegative
			if n > MaxPodsPerJob {
				detail = fmt.Sprintf("must be at most %d, the most pods an Indexed Job runs", MaxPodsPerJob)
			}
			errs = append(errs, field.Invalid(field.NewPath("spec", "mlPolicy", "numNodes"), n, detail))
		}
		if kind := (runtime.Policy{MLPolicy: p}).Kind(); kind != runtime.PlainML && !hasTrainer {
			errs = append(errs, field.Required(jobsPath, fmt.Sprintf("the %s policy needs a replicated job labelled %s: %s",
				policyName(kind), trainer.AncestorLabel, trainer.AncestorTrainer)))
		}
	}
	return errs
}

// dependsOnRefusal says why the i-th replicated job, job, may not depend on target, which is not
// listed before it, with the rule of JobSet's webhook that refuses it (its message quoted):
// JobSet starts replicated jobs in list order. A job that waits for itself JobSet accepts, unless
// it comes first, and then never creates its Jobs, waiting for a status they would have to
// reach.
func dependsOnRefusal(i int, job, target string) string {
	detail := fmt.Sprintf("must name a replicated job listed before %q: ", job)
	switch {
	case i == 0:
		return detail + `JobSet refuses the JobSet of every TrainJob of this runtime ("DependsOn can't be set for the first ReplicatedJob")`
	case target == job:
		return detail + "JobSet accepts a replicated job that waits for itself, and never creates its Jobs"
	default:
		return detail + fmt.Sprintf("JobSet refuses the JobSet of every TrainJob of this runtime (%q)",
			fmt.Sprintf("replicatedJob: %s cannot depend on replicatedJob: %s", job, target))
	}
}

func policyName(kind runtime.MLPolicyKind) string {
	switch kind {
	case runtime.Torch:
		return "torch"
	case runtime.MPI:
		return "mpi"
	case runtime.JAX:
		return "jax"
	case runtime.XGBoost:
		return "xgboost"
	case runtime.Flux:
		return "flux"
	default:
		return string(kind)
	}
}
