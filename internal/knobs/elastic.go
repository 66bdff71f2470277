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

package knobs

import (
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultMaxRestarts is torchrun's restart budget of an elastic TrainJob when none is set.
const DefaultMaxRestarts = 3

// maxNodes bounds a node count: one Indexed Job runs the nodes, and it runs at most 100,000 pods.
const maxNodes = 100_000

// Elastic is an elastic torch TrainJob's node range.
type Elastic struct {
	MinNodes, MaxNodes int32
	MaxRestarts        int32
	// Target is the node count asked for now; nil leaves it at numNodes.
	Target *int32
}

// ParseElastic reads the elastic knobs of effective annotations: nil when the TrainJob is not
// elastic (neither min-nodes nor max-nodes set).
func ParseElastic(annotations map[string]string) (*Elastic, field.ErrorList) {
	var errs field.ErrorList
	read := func(key string, lo, hi int64) (int32, bool) {
		v, ok, err := intKnob(annotations, key, lo, hi)
		if err != nil {
			errs = append(errs, err)
			return 0, false
		}
		return v, ok
	}
	minNodes, hasMin := read(ElasticMinNodes, 1, maxNodes)
	maxN, hasMax := read(ElasticMaxNodes, 1, maxNodes)
	restarts, hasRestarts := read(ElasticMaxRestarts, 0, math.MaxInt32)
	target, hasTarget := read(ElasticTargetNodes, 1, maxNodes)
	_, minSet := annotations[ElasticMinNodes]
	_, maxSet := annotations[ElasticMaxNodes]
	if !minSet && !maxSet {
		for _, k := range []string{ElasticMaxRestarts, ElasticTargetNodes} {
			if _, ok := annotations[k]; ok {
				errs = append(errs, field.Forbidden(Path(k), fmt.Sprintf("needs %s and %s: the TrainJob is not elastic", ElasticMinNodes, ElasticMaxNodes)))
			}
		}
		return nil, errs
	}
	switch {
	case minSet != maxSet:
		missing := ElasticMaxNodes
		if !minSet {
			missing = ElasticMinNodes
		}
		errs = append(errs, field.Required(Path(missing), fmt.Sprintf("an elastic TrainJob sets both %s and %s", ElasticMinNodes, ElasticMaxNodes)))
	case hasMin && hasMax && minNodes > maxN:
		errs = append(errs, field.Invalid(Path(ElasticMinNodes), annotations[ElasticMinNodes], fmt.Sprintf("must not exceed %s (%d)", ElasticMaxNodes, maxN)))
	}
	if len(errs) > 0 {
		return nil, errs
	}
	e := &Elastic{MinNodes: minNodes, MaxNodes: maxN, MaxRestarts: DefaultMaxRestarts}
	if hasRestarts {
		e.MaxRestarts = restarts
	}
	if hasTarget {
		if target < minNodes || target > maxN {
			return nil, field.ErrorList{field.Invalid(Path(ElasticTargetNodes), annotations[ElasticTargetNodes],
				fmt.Sprintf("must be from %s (%d) to %s (%d)", ElasticMinNodes, minNodes, ElasticMaxNodes, maxN))}
		}
		e.Target = &target
	}
	return e, nil
}

// ValidateNodes checks numNodes, the TrainJob's starting size, against the range.
func (e *Elastic) ValidateNodes(numNodes int32, numNodesPath *field.Path) field.ErrorList {
	if numNodes < e.MinNodes || numNodes > e.MaxNodes {
		return field.ErrorList{field.Invalid(numNodesPath, numNodes,
			fmt.Sprintf("an elastic TrainJob starts with %s (%d) to %s (%d) nodes", ElasticMinNodes, e.MinNodes, ElasticMaxNodes, e.MaxNodes))}
	}
	return nil
}
