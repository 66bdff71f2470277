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
	"maps"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// An OptimizationJob's knobs: annotations on the OptimizationJob itself (it has no runtime to
// default them). They are not a TrainJob knob family: trial TrainJobs carry other
// optimization.gantry.dev/ keys (internal/optimization) that the TrainJob checks must not refuse.
const (
	// OptimizationMaxFailedTrials is how many trials may fail before the OptimizationJob fails
	// (it fails at one more), from 0 to 100; DefaultMaxFailedTrials when unset.
	OptimizationMaxFailedTrials = "optimization.gantry.dev/max-failed-trials"
	// OptimizationSuspend "true" suspends the OptimizationJob: its unfinished trials get
	// spec.suspend and no new trial starts; removing it or "false" resumes them.
	OptimizationSuspend = "optimization.gantry.dev/suspend"
)

// DefaultMaxFailedTrials tolerates a few broken trials (a bad parameter region, a node lost)
// without running a search whose every trial fails to the end.
const DefaultMaxFailedTrials = 3

// The OptimizationJob knob keys; any other key under the prefix is a typo.
var (
	optimizationPrefix = "optimization.gantry.dev/"
	optimizationKnobs  = []string{OptimizationMaxFailedTrials, OptimizationSuspend}
)

// Optimization are an OptimizationJob's settings read from its annotations.
type Optimization struct {
	MaxFailedTrials int32
	Suspend         bool
}

// ParseOptimization reads an OptimizationJob's knobs; a bad value keeps its default and is
// returned as an error (the webhook refuses it, the controller goes on with the default).
func ParseOptimization(annotations map[string]string) (Optimization, field.ErrorList) {
	var errs field.ErrorList
	o := Optimization{MaxFailedTrials: DefaultMaxFailedTrials}
	if n, ok, err := intKnob(annotations, OptimizationMaxFailedTrials, 0, 100); err != nil {
		errs = append(errs, err)
	} else if ok {
		o.MaxFailedTrials = n
	}
	if raw, ok := annotations[OptimizationSuspend]; ok {
		switch raw {
		case "true":
			o.Suspend = true
		case "false":
		default:
			errs = append(errs, field.NotSupported(Path(OptimizationSuspend), raw, []string{"true", "false"}))
		}
	}
	return o, errs
}

// ValidateOptimizationJob checks an OptimizationJob's knobs: unknown keys under the prefix and
// bad values.
func ValidateOptimizationJob(annotations map[string]string) field.ErrorList {
	var errs field.ErrorList
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		if strings.HasPrefix(k, optimizationPrefix) && !slices.Contains(optimizationKnobs, k) {
			errs = append(errs, field.NotSupported(Path(k), k, optimizationKnobs))
		}
	}
	_, valueErrs := ParseOptimization(annotations)
	return append(errs, valueErrs...)
}
