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

package differential

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Stage is what is being admitted.
type Stage string

// The two stages of a case: the runtime, then a TrainJob that uses it.
const (
	RuntimeStage  Stage = "runtime"
	TrainJobStage Stage = "TrainJob"
)

// Difference is a refusal Gantry makes on purpose where Kubeflow Trainer v2.3 accepts; each is
// listed, with its reason, in docs/compatibility.md.
type Difference struct {
	Stage  Stage
	Path   *regexp.Regexp
	Detail *regexp.Regexp
}

func difference(stage Stage, path, detail string) Difference {
	return Difference{Stage: stage, Path: regexp.MustCompile("^" + path + "$"), Detail: regexp.MustCompile(detail)}
}

// Differences is docs/compatibility.md's "What Gantry refuses that Kubeflow Trainer v2.3
// accepts", as matchers of Gantry's field errors.
var Differences = []Difference{
	difference(RuntimeStage, `spec`, `a runtime needs a spec`),
	difference(RuntimeStage, `spec\.template`, `a runtime needs a template`),
	difference(RuntimeStage, `spec\.template\.spec\.replicatedJobs`, `a runtime needs at least one replicated job`),
	difference(RuntimeStage, `spec\.template\.spec\.replicatedJobs\[\d+\]\.(replicas|template\.spec\.(parallelism|completions))`, `must be greater than or equal to 0`),
	difference(RuntimeStage, `spec\.template\.spec\.replicatedJobs\[\d+\]\.replicas`, `the product of replicas and parallelism must not exceed`),
	difference(RuntimeStage, `spec\.mlPolicy\.numNodes`, `must be greater than or equal to 0|must be at most 100000`),
	difference(RuntimeStage, `spec\.template\.spec\.replicatedJobs\[\d+\]\.dependsOn\[\d+\]\.name`, ``),
	difference(RuntimeStage, `spec\.template\.spec\.replicatedJobs`, `policy needs a replicated job labelled trainer\.kubeflow\.org/trainjob-ancestor-step: trainer`),
	difference(RuntimeStage, `spec\.podGroupPolicy`, `only one of coscheduling and volcano can be configured`),
	difference(RuntimeStage, `spec\.mlPolicy\.mpi\.numProcPerNode`, `NumProcPerNode in mpiPolicy must be >= 1`),
	difference(RuntimeStage, `spec\.template\.spec\.ttlSecondsAfterFinished`, `set the annotation ttl\.gantry\.dev/seconds-after-finished`),
	// Gantry's own knobs: annotations the reference ignores.
	difference(RuntimeStage, `metadata\.annotations\[(ttl|elastic)\.gantry\.dev/[^\]]*\]`, ``),
	difference(TrainJobStage, `metadata\.annotations\[(ttl|elastic)\.gantry\.dev/[^\]]*\]`, ``),
	difference(TrainJobStage, `spec\.trainer(\.numNodes)?`, `an elastic TrainJob`),
	difference(TrainJobStage, `metadata\.name`, `must be no more than \d+ characters with runtime`),
	difference(TrainJobStage, `spec\.trainer\.numProcPerNode`, `numProcPerNode must be greater than or equal to 1`),
	difference(TrainJobStage, `spec\.trainer\.numNodes`, `should be greater than or equal to 0|must be at most 100000`),
	difference(TrainJobStage, `spec\.runtimePatches\[\d+\]\.trainingRuntimeSpec\.template\.spec\.replicatedJobs\[\d+\]\.name`,
		`must not have replicated job that doesn't exist in the runtime job template`),
	difference(TrainJobStage, `spec\.runtimePatches\[\d+\]\.trainingRuntimeSpec\.template\.spec\.replicatedJobs\[\d+\]\.template\.spec\.template\.spec\.(initContainers|containers)\[\d+\]\.name`,
		`must not have (initContainer|container) that doesn't exist in the runtime job`),
	// Kubeflow Trainer refuses a TrainJob without spec too, with "unsupported runtime: ." and no
	// field; Gantry names spec.
	difference(TrainJobStage, `spec`, `a TrainJob needs a spec`),
	difference(TrainJobStage, `spec\.runtimePatches\[\d+\]\.trainingRuntimeSpec\.template\.spec\.replicatedJobs\[\d+\](\.template\.spec\.template\.spec\.(initContainers|containers)\[\d+\])?\.name`,
		`must be no more than 63 characters`),
}

func deliberate(stage Stage, e *field.Error) bool {
	return slices.ContainsFunc(Differences, func(d Difference) bool {
		return d.Stage == stage && d.Path.MatchString(e.Field) && d.Detail.MatchString(e.ErrorBody())
	})
}

// Compare returns what is wrong with Gantry's decision given the reference's, or "" when they
// agree: the same decision, and where both refuse, Gantry's refusal names every field the
// reference's does; any refusal the reference does not make is a listed Difference.
func Compare(stage Stage, gantry, reference field.ErrorList) string {
	var unlisted field.ErrorList
	for _, e := range gantry {
		if !deliberate(stage, e) {
			unlisted = append(unlisted, e)
		}
	}
	switch {
	case len(reference) == 0 && len(unlisted) > 0:
		return fmt.Sprintf("the reference accepts the %s, Gantry refuses it: %s", stage, describe(unlisted))
	case len(reference) > 0 && len(gantry) == 0:
		return fmt.Sprintf("the reference refuses the %s (%s), Gantry accepts it", stage, describe(reference))
	case len(reference) > 0 && len(unlisted) > 0:
		// Gantry refuses for reasons of its own only where it also names the reference's fields.
		if missing := missingPaths(gantry, reference); len(missing) > 0 {
			return fmt.Sprintf("both refuse the %s, but Gantry does not name %s: Gantry %s; reference %s",
				stage, strings.Join(missing, ", "), describe(gantry), describe(reference))
		}
	}
	return ""
}

func missingPaths(gantry, reference field.ErrorList) []string {
	var missing []string
	for _, r := range reference {
		if !slices.ContainsFunc(gantry, func(g *field.Error) bool { return g.Field == r.Field }) && !slices.Contains(missing, r.Field) {
			missing = append(missing, r.Field)
		}
	}
	return missing
}

func describe(errs field.ErrorList) string {
	parts := make([]string, 0, len(errs))
	for _, e := range errs {
		parts = append(parts, e.Error())
	}
	return strings.Join(parts, "; ")
}
