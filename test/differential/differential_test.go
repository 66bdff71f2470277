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
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

var (
	gantry    *Gantry
	reference *Reference
	seeds     []*Case
)

func TestMain(m *testing.M) {
	var err error
	if gantry, err = NewGantry(); err == nil {
		if reference, err = NewReference(context.Background()); err == nil {
			seeds, err = Seeds()
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// outcome is both sides' decisions on a case, and what is wrong with Gantry's.
type outcome struct {
	problem          string
	runtimeAccepted  bool
	trainJobAccepted bool
	referenceCrashed bool
	// detail is both sides' refusals, for the failure message.
	detail string
}

func run(ctx context.Context, c *Case) outcome {
	gRuntime := gantry.AdmitRuntime(ctx, c.DeepCopy().Runtime)
	rRuntime, crash := reference.AdmitRuntime(ctx, c.DeepCopy().Runtime)
	if crash != nil {
		return outcome{referenceCrashed: true}
	}
	if p := Compare(RuntimeStage, gRuntime, rRuntime); p != "" || len(gRuntime) > 0 || len(rRuntime) > 0 {
		return outcome{problem: p, detail: details(gRuntime, rRuntime)}
	}
	// Both admitted the runtime: the TrainJob, against the defaulted runtime.
	rt := c.DeepCopy().Runtime
	_ = schemaErrors(ctx, gantry.schemas, rt)
	gJob := gantry.AdmitTrainJob(ctx, rt, c.DeepCopy().TrainJob)
	rJob, crash := reference.AdmitTrainJob(ctx, rt, c.DeepCopy().TrainJob)
	if crash != nil {
		return outcome{runtimeAccepted: true, referenceCrashed: true}
	}
	return outcome{
		problem:          Compare(TrainJobStage, gJob, rJob),
		runtimeAccepted:  true,
		trainJobAccepted: len(gJob) == 0 && len(rJob) == 0,
		detail:           details(gJob, rJob),
	}
}

func details(g, r field.ErrorList) string {
	return fmt.Sprintf("Gantry: %s\nreference: %s", describe(g), describe(r))
}

// TestSeeds: every fixture is admitted by both, so the mutations start from valid objects.
func TestSeeds(t *testing.T) {
	if len(seeds) < 10 {
		t.Fatalf("only %d seeds: the fixtures were not found", len(seeds))
	}
	for _, c := range seeds {
		t.Run(c.Name, func(t *testing.T) {
			got := run(t.Context(), c)
			want := outcome{runtimeAccepted: true, trainJobAccepted: true}
			if diff := cmp.Diff(want, got, cmp.AllowUnexported(outcome{}), cmpopts.IgnoreFields(outcome{}, "detail")); diff != "" {
				t.Errorf("outcome (-want,+got):\n%s\n%s", diff, got.detail)
			}
		})
	}
}

// TestEveryMutation applies each value of each mutator to each seed: the deterministic part of
// the differential, run by go test.
func TestEveryMutation(t *testing.T) {
	cases, crashes := 0, 0
	for _, seed := range seeds {
		for _, m := range Mutators {
			for v := range m.Values {
				c := seed.DeepCopy()
				m.Apply(c, v)
				got := run(t.Context(), c)
				cases++
				if got.referenceCrashed {
					crashes++
				}
				if got.problem != "" {
					t.Errorf("%s, %s #%d: %s", seed.Name, m.Name, v, got.problem)
				}
			}
		}
	}
	t.Logf("%d cases, %d where the reference panicked", cases, crashes)
}

// FuzzDifferential combines up to six mutations of a seed. CI runs it for 30 s
// (make test-fuzz); `go test -fuzz FuzzDifferential` runs it for as long as you like.
func FuzzDifferential(f *testing.F) {
	for i := range seeds {
		for m := range Mutators {
			f.Add(uint8(i), []byte{byte(m), 0, byte((m + 1) % len(Mutators)), 1})
		}
	}
	f.Fuzz(func(t *testing.T, seed uint8, data []byte) {
		c := seeds[int(seed)%len(seeds)].DeepCopy()
		var applied []string
		for _, mv := range Mutations(data) {
			Mutators[mv[0]].Apply(c, mv[1])
			applied = append(applied, fmt.Sprintf("%s #%d", Mutators[mv[0]].Name, mv[1]))
		}
		if got := run(t.Context(), c); got.problem != "" {
			t.Errorf("%s, %v: %s", c.Name, applied, got.problem)
		}
	})
}

// TestCompare proves the comparison catches each kind of disagreement.
func TestCompare(t *testing.T) {
	name := field.NewPath("metadata", "name")
	ref := field.NewPath("spec", "runtimeRef")
	listed := field.Invalid(name, "x", `must be no more than 48 characters with runtime "torch-distributed": ...`)
	unlisted := field.Invalid(ref, "x", "must have dataset-initializer job when trainJob is configured with input datasetConfig")
	other := field.Invalid(field.NewPath("spec", "trainer", "env"), "x", "must not have reserved envs")
	for _, tc := range []struct {
		name              string
		gantry, reference field.ErrorList
		wantProblem       bool
	}{
		{"both accept", nil, nil, false},
		{"a listed refusal of Gantry's own", field.ErrorList{listed}, nil, false},
		{"an unlisted refusal of Gantry's own", field.ErrorList{unlisted}, nil, true},
		{"the reference refuses, Gantry accepts", nil, field.ErrorList{unlisted}, true},
		{"both refuse at the same field", field.ErrorList{unlisted}, field.ErrorList{unlisted}, false},
		{"both refuse, Gantry at another field", field.ErrorList{other}, field.ErrorList{unlisted}, true},
		{"both refuse, Gantry adds a listed refusal", field.ErrorList{listed, unlisted}, field.ErrorList{unlisted}, false},
		{"both refuse, Gantry for a listed reason only", field.ErrorList{listed}, field.ErrorList{unlisted}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Compare(TrainJobStage, tc.gantry, tc.reference)
			if (got != "") != tc.wantProblem {
				t.Errorf("Compare = %q, want a problem: %v", got, tc.wantProblem)
			}
		})
	}
}
