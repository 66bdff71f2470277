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

// Package knobs holds Gantry's own settings of a TrainJob: annotations (`*.gantry.dev/...`) on
// the TrainJob, with defaults as the same annotations on its runtime. They are annotations, not
// spec fields, because Kueue decodes TrainJobs into Kubeflow Trainer v2.3's Go type and writes
// them back whole: a field that type lacks would be erased, and annotations are kept.
package knobs

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// The annotations, by feature.
const (
	TTLSecondsAfterFinished = "ttl.gantry.dev/seconds-after-finished"
	TTLCleanPods            = "ttl.gantry.dev/clean-pods"

	ElasticMinNodes    = "elastic.gantry.dev/min-nodes"
	ElasticMaxNodes    = "elastic.gantry.dev/max-nodes"
	ElasticMaxRestarts = "elastic.gantry.dev/max-restarts"
	ElasticTargetNodes = "elastic.gantry.dev/target-nodes"
)

// prefixes are the knob families; any other key under them is a typo, refused rather than
// silently doing nothing.
var prefixes = map[string][]string{
	"ttl.gantry.dev/":     {TTLSecondsAfterFinished, TTLCleanPods},
	"elastic.gantry.dev/": {ElasticMinNodes, ElasticMaxNodes, ElasticMaxRestarts, ElasticTargetNodes},
}

// runtimeDefaults are the knobs a runtime may set for its TrainJobs; target-nodes is a
// running job's own.
var runtimeDefaults = []string{TTLSecondsAfterFinished, TTLCleanPods, ElasticMinNodes, ElasticMaxNodes, ElasticMaxRestarts}

// Path is the field path of an annotation, as admission errors name it.
func Path(key string) *field.Path {
	return field.NewPath("metadata", "annotations").Key(key)
}

func isKnob(key string) bool {
	for prefix := range prefixes {
		if strings.HasPrefix(key, prefix) {
			return true
		}
	}
	return false
}

// Defaults returns the knobs among a runtime's annotations: what a snapshot of it keeps.
func Defaults(runtimeAnnotations map[string]string) map[string]string {
	var out map[string]string
	for _, k := range runtimeDefaults {
		if v, ok := runtimeAnnotations[k]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[k] = v
		}
	}
	return out
}

// Of are a TrainJob's effective knobs over the runtime it is built from: its own annotations
// over the runtime's defaults (for a built TrainJob, its snapshot's runtime, so the defaults it
// was built with).
func Of(tj, rt metav1.Object) map[string]string {
	return Effective(tj.GetAnnotations(), Defaults(rt.GetAnnotations()))
}

// Effective merges a TrainJob's knobs over its runtime's defaults, key by key.
func Effective(job, defaults map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range defaults {
		if isKnob(k) {
			out[k] = v
		}
	}
	for k, v := range job {
		if isKnob(k) {
			out[k] = v
		}
	}
	return out
}

// validateKeys refuses unknown keys under the knob prefixes; forRuntime also refuses the knobs a
// runtime cannot set.
func validateKeys(annotations map[string]string, forRuntime bool) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		for prefix, known := range prefixes {
			if !strings.HasPrefix(k, prefix) {
				continue
			}
			switch {
			case !slices.Contains(known, k):
				errs = append(errs, field.NotSupported(Path(k), k, known))
			case forRuntime && !slices.Contains(runtimeDefaults, k):
				errs = append(errs, field.Forbidden(Path(k), "is set on a TrainJob, not on its runtime"))
			}
		}
	}
	return errs
}

// intKnob reads an integer annotation in [lo, hi]; ok is false when absent.
func intKnob(annotations map[string]string, key string, lo, hi int64) (value int32, ok bool, err *field.Error) {
	raw, ok := annotations[key]
	if !ok {
		return 0, false, nil
	}
	n, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil || n < lo || n > hi {
		return 0, true, field.Invalid(Path(key), raw, fmt.Sprintf("must be an integer from %d to %d", lo, hi))
	}
	return int32(n), true, nil
}
