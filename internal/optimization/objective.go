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

package optimization

import (
	"math"
	"strconv"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Objective is the objective metric's value a trial reported: the value of the entry named
// metric in its status.trainerStatus.metrics, the list the status server replaces whole on each
// report, so the last value the training code sent. ok is false when the trial reported no such
// metric or a value that is not a finite number.
func Objective(tj *trainer.TrainJob, metric string) (value float64, ok bool) {
	ts := tj.Status.TrainerStatus
	if ts == nil {
		return 0, false
	}
	for _, m := range ts.Metrics {
		if m.Name != metric {
			continue
		}
		v, err := strconv.ParseFloat(m.Value, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, false
		}
		return v, true
	}
	return 0, false
}

// Better reports whether a beats b in direction (Minimize when empty, the schema's default).
// Equal values do not: the earlier trial stays best.
func Better(direction trainer.ObjectiveDirection, a, b float64) bool {
	if direction == trainer.ObjectiveDirectionMaximize {
		return a > b
	}
	return a < b
}
