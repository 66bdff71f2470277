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

// Package differential runs Gantry's admission and Kubeflow Trainer v2.3.0's (the
// github.com/kubeflow/trainer/v2 module, imported here only) on the same runtimes and TrainJobs,
// and reports where their decisions differ beyond the deliberate differences. It also holds
// Gantry's CRDs to the reference's (crd_schema_test.go) and to what an apiserver serves
// (served_test.go), renders both builds of the reference's own fixtures (render_test.go), and
// sends the reference's JobSets to JobSet's webhooks (jobset_test.go).
//
// It is a module of its own so that the reference implementation and the dependency versions
// it brings never reach Gantry's go.mod.
package differential
