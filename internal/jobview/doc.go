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

// Package jobview is the practitioner's view of a TrainJob, shared by `gantry` (the kubectl
// plugin) and the web UI so the two never disagree: the derived state, the steps (the Kubeflow
// Python SDK's step model, newest pod per step), progress, the merged events and a log
// follower. Everything that decides is a pure function of API objects; Reader only fetches.
// It is internal: the command line and the UI are its only users, and it makes no promise to
// code outside this module (pkg/testkit is Gantry's one public Go API).
package jobview
