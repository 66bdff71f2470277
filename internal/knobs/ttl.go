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
	"math"
	"time"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// CleanPods says what is deleted when a TrainJob finishes (Training Operator v1's
// cleanPodPolicy).
type CleanPods string

const (
	// CleanNone keeps the JobSet and its pods (the default).
	CleanNone CleanPods = "None"
	// CleanRunning deletes the JobSet when pods of it still run after the finish; a JobSet
	// whose pods all ended is kept, with their logs.
	CleanRunning CleanPods = "Running"
	// CleanAll deletes the JobSet, and with it every Job and pod.
	CleanAll CleanPods = "All"
)

// TTL is what happens to a TrainJob after it finished.
type TTL struct {
	// After is how long a finished TrainJob is kept; nil keeps it.
	After *time.Duration
	// CleanPods is what goes at the finish, the TrainJob staying.
	CleanPods CleanPods
}

// ParseTTL reads the TTL knobs of effective annotations (Effective's), with their errors.
func ParseTTL(annotations map[string]string) (TTL, field.ErrorList) {
	var errs field.ErrorList
	ttl := TTL{CleanPods: CleanNone}
	secs, ok, err := intKnob(annotations, TTLSecondsAfterFinished, 0, math.MaxInt32)
	switch {
	case err != nil:
		errs = append(errs, err)
	case ok:
		d := time.Duration(secs) * time.Second
		ttl.After = &d
	}
	if raw, ok := annotations[TTLCleanPods]; ok {
		switch c := CleanPods(raw); c {
		case CleanNone, CleanRunning, CleanAll:
			ttl.CleanPods = c
		default:
			errs = append(errs, field.NotSupported(Path(TTLCleanPods), raw, []CleanPods{CleanNone, CleanRunning, CleanAll}))
		}
	}
	return ttl, errs
}
