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

// Package features holds Gantry's feature gates.
package features

import (
	"k8s.io/component-base/featuregate"
)

// TrainJobStatus lets training code report progress into TrainJob.status.trainerStatus through
// the status server (KEP-2779): the TrainJobStatus plugin injects the server's address, CA and a
// TrainJob-scoped token into the trainer pods, and the manager runs the server.
//
// owner: gantry maintainers; KEP: kubeflow/trainer#2779; stage: beta, on by default. Kubeflow
// Trainer ships it as alpha, off by default; Gantry turns it on because the wire contract is the
// same and a pod that never reports progress is not affected.
const TrainJobStatus featuregate.Feature = "TrainJobStatus"

// OptimizationJob runs OptimizationJobs (trainer.kubeflow.org/v1alpha1, Kubeflow Trainer main's
// API, which ships no controller yet): the manager runs their controller and webhook. Off, the
// CRD is still served and OptimizationJobs are stored, but nothing runs them.
//
// owner: gantry maintainers; issue: kubeflow/trainer#3562 (API: #3552, #3883); stage: beta, on
// by default once its envtest suites pass (test/integration/optimizationjob).
const OptimizationJob featuregate.Feature = "OptimizationJob"

var gates = featuregate.NewFeatureGate()

func init() {
	if err := gates.Add(map[featuregate.Feature]featuregate.FeatureSpec{
		TrainJobStatus:  {Default: true, PreRelease: featuregate.Beta},
		OptimizationJob: {Default: true, PreRelease: featuregate.Beta},
	}); err != nil {
		panic(err)
	}
}

// Gates is the process-wide mutable gate set, set once at start-up.
func Gates() featuregate.MutableFeatureGate {
	return gates
}

// Enabled reports whether a feature is on.
func Enabled(f featuregate.Feature) bool {
	return gates.Enabled(f)
}

// SetFeatureGateDuringTest sets a gate for the rest of a test and restores it afterwards.
func SetFeatureGateDuringTest(t interface {
	Helper()
	Cleanup(func())
	Fatalf(string, ...any)
}, f featuregate.Feature, value bool) {
	t.Helper()
	old := gates.Enabled(f)
	if err := gates.SetFromMap(map[string]bool{string(f): value}); err != nil {
		t.Fatalf("setting feature gate %s: %v", f, err)
	}
	t.Cleanup(func() {
		if err := gates.SetFromMap(map[string]bool{string(f): old}); err != nil {
			t.Fatalf("restoring feature gate %s: %v", f, err)
		}
	})
}
