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

// The OptimizationJob controller's faults, built only with -tags faults;
// optimizationjob_nofaults.go is the product's build.

package controller

import "github.com/gantry-ml/gantry/internal/faults"

// crashAfterTrialCreate is the OptimizationCrashAfterTrial fault: a reconcile stops with an
// error right after each trial it creates, before it writes the status.
func crashAfterTrialCreate() bool { return faults.Enabled(faults.OptimizationCrashAfterTrial) }

// randomTrialNames is the OptimizationRandomTrialNames fault (the restart test's guard): trials
// get generated names, so a creation repeated after a restart makes a second trial.
func randomTrialNames() bool { return faults.Enabled(faults.OptimizationRandomTrialNames) }
