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

package trainjob

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// Outcome is how a TrainJob ended, StateComplete or StateFailed, from its terminal condition
// (Failed wins, as Kubeflow Trainer sets only one); "" while it has not ended. at is when it did:
// the condition's last transition, which TTLs and durations count from.
func Outcome(status *trainer.TrainJobStatus) (outcome State, at *metav1.Time) {
	for _, c := range []struct {
		cond  string
		state State
	}{{trainer.TrainJobFailed, StateFailed}, {trainer.TrainJobComplete, StateComplete}} {
		if cond := meta.FindStatusCondition(status.Conditions, c.cond); cond != nil && cond.Status == metav1.ConditionTrue {
			return c.state, cond.LastTransitionTime.DeepCopy()
		}
	}
	return "", nil
}

// Finished reports whether the TrainJob has ended: nothing is built for it again.
func Finished(status *trainer.TrainJobStatus) bool {
	outcome, _ := Outcome(status)
	return outcome != ""
}
