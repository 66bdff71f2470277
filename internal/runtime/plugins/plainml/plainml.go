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

// Package plainml handles runtimes without an ML framework: the TrainJob's numNodes sets the
// trainer's pod count, and nothing else is injected.
package plainml

import (
	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "PlainML"

// PlainML is the ML policy of runtimes without a framework.
type PlainML struct{}

var _ framework.EnforceMLPolicyPlugin = (*PlainML)(nil)

// New creates the plugin.
func New(framework.Options) (framework.Plugin, error) {
	return &PlainML{}, nil
}

// Name returns the plugin name.
func (*PlainML) Name() string { return Name }

// MLPolicyKind is PlainML.
func (*PlainML) MLPolicyKind() runtime.MLPolicyKind { return runtime.PlainML }

// EnforceMLPolicy sets the trainer's pod count from trainer.numNodes.
func (*PlainML) EnforceMLPolicy(info *runtime.Info, tj *trainer.TrainJob) error {
	if tj.Spec.Trainer != nil {
		info.SetTrainerCount(tj.Spec.Trainer.NumNodes)
	}
	return nil
}
