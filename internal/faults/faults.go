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

// Package faults holds the defects the reliability and local-run suites inject on purpose, to
// prove that their invariants catch them (a suite that cannot fail proves nothing). Only files
// built with -tags faults use it, so the binaries Gantry ships do not link it (the suites build
// theirs with the tag; docs/testing.md). In that build the faults are switched on only by the
// GANTRY_FAULT_INJECTION environment variable, which no install sets; the manager logs a warning
// when it is set.
package faults

import (
	"os"
	"slices"
	"strings"
)

// EnvVar names the faults to inject, comma-separated.
const EnvVar = "GANTRY_FAULT_INJECTION"

// RecreateJobSets makes every manager start delete and create again the JobSet of each TrainJob
// it builds: a non-idempotent JobSet create, the defect class of a finished job running again.
const RecreateJobSets = "recreate-jobsets"

// WriteUnchangedStatus makes the TrainJob reconciler patch the status even when nothing changed:
// the needless-write defect I5 exists to catch.
const WriteUnchangedStatus = "write-unchanged-status"

// LocalRunNoStop makes gantry run --local leave the other steps running when one fails: the
// defect the local-run suite's failure test exists to catch.
const LocalRunNoStop = "localrun-no-stop"

// OptimizationCrashAfterTrial makes the OptimizationJob reconciler stop with an error right
// after each trial it creates, before its status write: the moment a crash loses the most.
const OptimizationCrashAfterTrial = "optimization-crash-after-trial"

// OptimizationRandomTrialNames gives trials generated names instead of "<job>-<index>": the
// non-idempotent creation the OptimizationJob restart test exists to catch.
const OptimizationRandomTrialNames = "optimization-random-trial-names"

var enabled = strings.Split(os.Getenv(EnvVar), ",")

// InjectForTest injects the named faults in this process until the test ends, for in-process
// tests built with -tags faults.
func InjectForTest(t interface{ Cleanup(func()) }, names ...string) {
	old := enabled
	enabled = names
	t.Cleanup(func() { enabled = old })
}

// Enabled reports whether the fault name is injected.
func Enabled(name string) bool { return slices.Contains(enabled, name) }

// Any reports whether any fault is injected.
func Any() bool { return os.Getenv(EnvVar) != "" }
