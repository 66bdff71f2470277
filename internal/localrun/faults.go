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

// The local-run suite's gantry: built with -tags faults, it injects the LocalRunNoStop fault when
// GANTRY_FAULT_INJECTION names it. nofaults.go is the product's build.

package localrun

import "github.com/gantry-ml/gantry/internal/faults"

// noStopFault is the LocalRunNoStop fault: a failed step leaves the others running.
func noStopFault() bool { return faults.Enabled(faults.LocalRunNoStop) }
