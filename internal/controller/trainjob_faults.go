//go:build faults

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

// The reliability suite's faults in the controller, built only with -tags faults (the suite's
// manager); trainjob_nofaults.go is the product's build.

package controller

import (
	"context"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/faults"
)

// writeUnchangedStatus is the WriteUnchangedStatus fault: the status is patched even when
// nothing changed.
func writeUnchangedStatus() bool { return faults.Enabled(faults.WriteUnchangedStatus) }

// recreated remembers which TrainJobs this process has already rebuilt under the
// RecreateJobSets fault: once per TrainJob and process start, as a defect that forgets what
// existed before a restart would.
var recreated sync.Map

// injectRecreateJobSet is the RecreateJobSets fault (the reliability suite's regression guard):
// it deletes the TrainJob's JobSet, releasing Gantry's finalizer, so that the build that follows
// creates it again, past the check that a JobSet existed. It reports whether it did; it does
// nothing unless the fault is injected.
func (r *TrainJobReconciler) injectRecreateJobSet(ctx context.Context, s *scope) (bool, error) {
	if !faults.Enabled(faults.RecreateJobSets) || s.jobSet == nil {
		return false, nil
	}
	if _, done := recreated.LoadOrStore(s.tj.UID, true); done {
		return false, nil
	}
	if err := r.removeOutcomeFinalizer(ctx, s.jobSet); err != nil {
		return false, err
	}
	if err := r.client.Delete(ctx, s.jobSet, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return false, err
	}
	s.jobSet = nil
	r.applier.Forget(s.tj)
	return true, nil
}
