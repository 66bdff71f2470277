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

package optimization

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"

	"k8s.io/apimachinery/pkg/types"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TrialName is trial index's TrainJob name: "<job>-<index>". It is a pure function of the
// index, so a trial created again (a restart that did not see its first creation) meets
// AlreadyExists instead of running twice.
func TrialName(job string, index int) string {
	return job + "-" + strconv.Itoa(index)
}

// IsGrid reports whether the search is grid search.
func IsGrid(spec *trainer.OptimizationJobSpec) bool {
	return spec.SearchAlgorithm != nil && spec.SearchAlgorithm.Grid != nil
}

// GridSize is the number of combinations of the categorical choices, capped just above
// MaxTrials so that 100 parameters of 100 choices cannot overflow; ok is false when a parameter
// is not categorical (the schema refuses grid search over it).
func GridSize(params []trainer.Parameter) (size int, ok bool) {
	size = 1
	for _, p := range params {
		if p.SearchSpace == nil || p.SearchSpace.Categorical == nil {
			return 0, false
		}
		size = min(size*len(p.SearchSpace.Categorical.Choices), MaxTrials+1)
	}
	return size, true
}

// Total is how many trials the search runs: numTrials, or for grid search the grid size when
// it is smaller (each combination runs once).
func Total(spec *trainer.OptimizationJobSpec) int {
	n := int(max(spec.NumTrials, 1))
	if IsGrid(spec) {
		if size, ok := GridSize(spec.Parameters); ok {
			return min(n, size)
		}
	}
	return n
}

// Seed is random search's seed: spec.searchAlgorithm.random.seed, or when unset the FNV-1a
// hash of the OptimizationJob's UID, so that two jobs differ while one job's trials stay the
// same across restarts.
func Seed(spec *trainer.OptimizationJobSpec, uid types.UID) int64 {
	if a := spec.SearchAlgorithm; a != nil && a.Random != nil && a.Random.Seed != nil {
		return *a.Random.Seed
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(uid))
	return int64(h.Sum64())
}

// Assign is trial index's parameter values, in spec.parameters order: a pure function of
// (seed, index, parameters).
//
// Grid search reads index as a mixed-radix number over the parameters' choices, the last
// parameter varying fastest: trial 0 takes every first choice, trial 1 the last parameter's
// second choice, and so on (lexicographic order by spec order).
//
// Random search draws, for each parameter in order, from a PCG generator seeded with
// (seed, index) (math/rand/v2's PCG, whose output Go documents as fixed): a categorical
// parameter takes choice IntN(len(choices)); uniform is min + u*(max-min) for u in [0, 1);
// logUniform is exp(log(min) + u*(log(max)-log(min))). An Int parameter's value is that number
// rounded to the nearest integer, kept within [ceil(min), floor(max)].
func Assign(spec *trainer.OptimizationJobSpec, seed int64, index int) ([]trainer.ParameterAssignment, error) {
	if IsGrid(spec) {
		return gridAssign(spec.Parameters, index)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), uint64(index)))
	out := make([]trainer.ParameterAssignment, 0, len(spec.Parameters))
	for _, p := range spec.Parameters {
		v, err := draw(rng, p)
		if err != nil {
			return nil, err
		}
		out = append(out, trainer.ParameterAssignment{Name: p.Name, Value: v})
	}
	return out, nil
}

func gridAssign(params []trainer.Parameter, index int) ([]trainer.ParameterAssignment, error) {
	out := make([]trainer.ParameterAssignment, len(params))
	rest := index
	for i := len(params) - 1; i >= 0; i-- {
		p := params[i]
		if p.SearchSpace == nil || p.SearchSpace.Categorical == nil {
			return nil, fmt.Errorf("parameter %q: grid search needs categorical parameters", p.Name)
		}
		choices := p.SearchSpace.Categorical.Choices
		out[i] = trainer.ParameterAssignment{Name: p.Name, Value: choices[rest%len(choices)]}
		rest /= len(choices)
	}
	if rest != 0 {
		return nil, fmt.Errorf("trial %d is beyond the grid", index)
	}
	return out, nil
}

func draw(rng *rand.Rand, p trainer.Parameter) (string, error) {
	s := p.SearchSpace
	switch {
	case s == nil:
		return "", fmt.Errorf("parameter %q has no search space", p.Name)
	case s.Categorical != nil:
		return s.Categorical.Choices[rng.IntN(len(s.Categorical.Choices))], nil
	case s.Uniform != nil:
		lo, hi, err := Bounds(s.Uniform.Min, s.Uniform.Max)
		if err != nil {
			return "", fmt.Errorf("parameter %q: %w", p.Name, err)
		}
		return format(lo+rng.Float64()*(hi-lo), lo, hi, s.Uniform.Type), nil
	case s.LogUniform != nil:
		lo, hi, err := Bounds(s.LogUniform.Min, s.LogUniform.Max)
		if err != nil || lo <= 0 {
			return "", fmt.Errorf("parameter %q: logUniform needs 0 < min < max", p.Name)
		}
		v := math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
		return format(v, lo, hi, s.LogUniform.Type), nil
	}
	return "", fmt.Errorf("parameter %q has no distribution", p.Name)
}

// Bounds parses a numeric search space's min and max.
func Bounds(minS, maxS string) (lo, hi float64, err error) {
	if lo, err = strconv.ParseFloat(minS, 64); err != nil {
		return 0, 0, fmt.Errorf("min %q: %w", minS, err)
	}
	if hi, err = strconv.ParseFloat(maxS, 64); err != nil {
		return 0, 0, fmt.Errorf("max %q: %w", maxS, err)
	}
	if lo >= hi {
		return 0, 0, fmt.Errorf("min %s is not below max %s", minS, maxS)
	}
	return lo, hi, nil
}

// IntRange is the integers an Int parameter over [lo, hi] can take; empty when lo > hi.
func IntRange(lo, hi float64) (first, last int64) {
	return int64(math.Ceil(lo)), int64(math.Floor(hi))
}

// format writes a drawn value: Int rounded into [ceil(lo), floor(hi)], Float in Go's shortest
// form that reads back exactly ('g', so 1e-05 rather than 0.00001).
func format(v, lo, hi float64, typ trainer.ParameterType) string {
	if typ == trainer.ParameterTypeInt {
		first, last := IntRange(lo, hi)
		return strconv.FormatInt(min(max(int64(math.Round(v)), first), last), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// EncodeParameters is the ParametersAnnotation value of a trial's values.
func EncodeParameters(values []trainer.ParameterAssignment) string {
	b, _ := json.Marshal(values) // a slice of string pairs always encodes
	return string(b)
}

// DecodeParameters reads a ParametersAnnotation value.
func DecodeParameters(raw string) ([]trainer.ParameterAssignment, error) {
	var out []trainer.ParameterAssignment
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", ParametersAnnotation, err)
	}
	return out, nil
}
