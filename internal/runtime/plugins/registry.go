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

// Package plugins lists the built-in plugins. The list order is the order plugins run in within
// each extension point.
package plugins

import (
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/coscheduling"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/flux"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/jax"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/jobset"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/mpi"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/plainml"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/torch"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/volcano"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/xgboost"
)

// Builtin returns the built-in plugins in execution order: the ML policies, the gang schedulers,
// the progress reporting injection (TrainJobStatus, present only when its feature gate is on),
// and the template owner (JobSet) last, so its Build sees every PodSet change.
func Builtin() []framework.Entry {
	return []framework.Entry{
		{Name: plainml.Name, New: plainml.New},
		{Name: torch.Name, New: torch.New},
		{Name: mpi.Name, New: mpi.New},
		{Name: jax.Name, New: jax.New},
		{Name: xgboost.Name, New: xgboost.New},
		{Name: flux.Name, New: flux.New},
		{Name: coscheduling.Name, New: coscheduling.New},
		{Name: volcano.Name, New: volcano.New},
		{Name: trainjobstatus.Name, New: trainjobstatus.New},
		{Name: jobset.Name, New: jobset.New},
	}
}
