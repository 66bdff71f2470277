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

package knobs

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateRuntime checks the knobs a runtime sets as defaults for its TrainJobs.
func ValidateRuntime(annotations map[string]string) field.ErrorList {
	errs := validateKeys(annotations, true)
	_, ttlErrs := ParseTTL(annotations)
	_, elasticErrs := ParseElastic(annotations)
	return append(append(errs, ttlErrs...), elasticErrs...)
}

// immutable are the knobs the render reads: a change would reach a running job only if it were
// built again, so they are fixed at creation.
var immutable = []string{ElasticMinNodes, ElasticMaxNodes, ElasticMaxRestarts}

// ValidateTrainJob checks a TrainJob's knobs (old nil on create) merged over its runtime's
// defaults. An update checks only what it changes, so a TrainJob admitted before a rule existed
// can still be suspended, relabelled and deleted.
func ValidateTrainJob(old, job, defaults map[string]string) field.ErrorList {
	checked := job
	if old != nil {
		// A key stored before (admission bypassed, or an older release) stays allowed.
		checked = map[string]string{}
		for k, v := range job {
			if differs(old, job, k) {
				checked[k] = v
			}
		}
	}
	errs := validateKeys(checked, false)
	if old != nil {
		for _, k := range immutable {
			if old[k] != job[k] {
				errs = append(errs, field.Forbidden(Path(k), fmt.Sprintf("cannot be changed after creation; scale with %s", ElasticTargetNodes)))
			}
		}
	}
	eff := Effective(job, defaults)
	_, ttlErrs := ParseTTL(eff)
	_, elasticErrs := ParseElastic(eff)
	for _, e := range append(ttlErrs, elasticErrs...) {
		if old == nil || changed(old, job, e.Field) {
			errs = append(errs, e)
		}
	}
	return errs
}

// changed reports whether the knob whose field path is path differs between old and job;
// an error naming no single knob counts as changed.
func changed(old, job map[string]string, path string) bool {
	for _, known := range prefixes {
		for _, k := range known {
			if Path(k).String() == path {
				return differs(old, job, k)
			}
		}
	}
	return true
}

func differs(old, job map[string]string, key string) bool {
	ov, ook := old[key]
	nv, nok := job[key]
	return ov != nv || ook != nok
}

// Changed reports whether any knob differs between two sets of annotations.
func Changed(old, job map[string]string) bool {
	for _, known := range prefixes {
		for _, k := range known {
			if differs(old, job, k) {
				return true
			}
		}
	}
	for k := range job {
		if _, ok := old[k]; !ok && isKnob(k) {
			return true // a new unknown key under a knob prefix: refused by the checks
		}
	}
	return false
}
