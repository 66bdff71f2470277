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

package runtime

import (
	"errors"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// MLPolicyKind names the ML framework a runtime selects.
type MLPolicyKind string

// ML policy kinds; PlainML is a runtime without a framework source.
const (
	PlainML MLPolicyKind = "PlainML"
	Torch   MLPolicyKind = "Torch"
	MPI     MLPolicyKind = "MPI"
	JAX     MLPolicyKind = "JAX"
	XGBoost MLPolicyKind = "XGBoost"
	Flux    MLPolicyKind = "Flux"
)

// Kind returns the ML framework the policy selects. The schema allows at most one source.
func (p Policy) Kind() MLPolicyKind {
	if p.MLPolicy == nil {
		return PlainML
	}
	switch s := p.MLPolicy.MLPolicySource; {
	case s.Torch != nil:
		return Torch
	case s.MPI != nil:
		return MPI
	case s.JAX != nil:
		return JAX
	case s.XGBoost != nil:
		return XGBoost
	case s.Flux != nil:
		return Flux
	default:
		return PlainML
	}
}

// TrainerNumNodes is the TrainJob's trainer.numNodes when set, else the runtime default.
func (i *Info) TrainerNumNodes(tj *trainer.TrainJob) int32 {
	if tj.Spec.Trainer != nil && tj.Spec.Trainer.NumNodes != nil {
		return *tj.Spec.Trainer.NumNodes
	}
	return i.RuntimePolicy.NumNodes()
}

// PodGroupPolicyKind names the gang scheduler a runtime selects.
type PodGroupPolicyKind string

// Pod group policy kinds; NoPodGroup is a runtime without gang scheduling.
const (
	NoPodGroup   PodGroupPolicyKind = ""
	Coscheduling PodGroupPolicyKind = "Coscheduling"
	Volcano      PodGroupPolicyKind = "Volcano"
)

// PodGroupKind returns the gang scheduler the policy selects. Runtime validation refuses a
// runtime choosing both; such a runtime (created with validation disabled) is an error here.
func (p Policy) PodGroupKind() (PodGroupPolicyKind, error) {
	pg := p.PodGroupPolicy
	switch {
	case pg == nil:
		return NoPodGroup, nil
	case pg.Coscheduling != nil && pg.Volcano != nil:
		return NoPodGroup, errors.New("the runtime's podGroupPolicy sets both coscheduling and volcano; only one gang scheduler can be used")
	case pg.Coscheduling != nil:
		return Coscheduling, nil
	case pg.Volcano != nil:
		return Volcano, nil
	default:
		return NoPodGroup, nil
	}
}
