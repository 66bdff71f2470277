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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/utils/ptr"
)

func errStrings[T interface{ Error() string }](errs []T) []string {
	var out []string
	for _, e := range errs {
		out = append(out, e.Error())
	}
	return out
}

func TestValidateTrainJob(t *testing.T) {
	ttlPath := "metadata.annotations[ttl.gantry.dev/seconds-after-finished]"
	cases := []struct {
		name               string
		old, job, defaults map[string]string
		want               []string
	}{
		{name: "no knobs", job: map[string]string{"team": "a"}},
		{name: "ttl 0 and clean-pods", job: map[string]string{TTLSecondsAfterFinished: "0", TTLCleanPods: "All"}},
		{name: "ttl -1", job: map[string]string{TTLSecondsAfterFinished: "-1"},
			want: []string{ttlPath + `: Invalid value: "-1": must be an integer from 0 to 2147483647`}},
		{name: "ttl abc", job: map[string]string{TTLSecondsAfterFinished: "abc"},
			want: []string{ttlPath + `: Invalid value: "abc": must be an integer from 0 to 2147483647`}},
		{name: "ttl 2^31", job: map[string]string{TTLSecondsAfterFinished: "2147483648"},
			want: []string{ttlPath + `: Invalid value: "2147483648": must be an integer from 0 to 2147483647`}},
		{name: "clean-pods unknown", job: map[string]string{TTLCleanPods: "Some"},
			want: []string{`metadata.annotations[ttl.gantry.dev/clean-pods]: Unsupported value: "Some": supported values: "None", "Running", "All"`}},
		{name: "typo under a knob prefix", job: map[string]string{"ttl.gantry.dev/seconds": "5"},
			want: []string{`metadata.annotations[ttl.gantry.dev/seconds]: Unsupported value: "ttl.gantry.dev/seconds": supported values: "ttl.gantry.dev/seconds-after-finished", "ttl.gantry.dev/clean-pods"`}},
		{name: "a bad runtime default refuses a new TrainJob", job: map[string]string{},
			defaults: map[string]string{TTLSecondsAfterFinished: "x"},
			want:     []string{ttlPath + `: Invalid value: "x": must be an integer from 0 to 2147483647`}},
		{name: "update keeping an old bad value passes", old: map[string]string{TTLSecondsAfterFinished: "x"},
			job: map[string]string{TTLSecondsAfterFinished: "x", "new": "label"}},
		{name: "update keeping an old unknown key passes", old: map[string]string{"ttl.gantry.dev/x": "1"},
			job: map[string]string{"ttl.gantry.dev/x": "1", TTLSecondsAfterFinished: "5"}},
		{name: "update changing the ttl is checked", old: map[string]string{TTLSecondsAfterFinished: "5"},
			job:  map[string]string{TTLSecondsAfterFinished: "-5"},
			want: []string{ttlPath + `: Invalid value: "-5": must be an integer from 0 to 2147483647`}},
		{name: "elastic", job: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4", ElasticTargetNodes: "2"}},
		{name: "elastic from runtime defaults, target on the job",
			defaults: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4"}, job: map[string]string{ElasticTargetNodes: "4"}},
		{name: "target above max", job: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4", ElasticTargetNodes: "5"},
			want: []string{`metadata.annotations[elastic.gantry.dev/target-nodes]: Invalid value: "5": must be from elastic.gantry.dev/min-nodes (1) to elastic.gantry.dev/max-nodes (4)`}},
		{name: "min above max", job: map[string]string{ElasticMinNodes: "3", ElasticMaxNodes: "2"},
			want: []string{`metadata.annotations[elastic.gantry.dev/min-nodes]: Invalid value: "3": must not exceed elastic.gantry.dev/max-nodes (2)`}},
		{name: "min alone", job: map[string]string{ElasticMinNodes: "1"},
			want: []string{`metadata.annotations[elastic.gantry.dev/max-nodes]: Required value: an elastic TrainJob sets both elastic.gantry.dev/min-nodes and elastic.gantry.dev/max-nodes`}},
		{name: "min 0", job: map[string]string{ElasticMinNodes: "0", ElasticMaxNodes: "2"},
			want: []string{`metadata.annotations[elastic.gantry.dev/min-nodes]: Invalid value: "0": must be an integer from 1 to 100000`}},
		{name: "target without a range", job: map[string]string{ElasticTargetNodes: "2"},
			want: []string{`metadata.annotations[elastic.gantry.dev/target-nodes]: Forbidden: needs elastic.gantry.dev/min-nodes and elastic.gantry.dev/max-nodes: the TrainJob is not elastic`}},
		{name: "range fixed after creation", old: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4"},
			job:  map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "8"},
			want: []string{`metadata.annotations[elastic.gantry.dev/max-nodes]: Forbidden: cannot be changed after creation; scale with elastic.gantry.dev/target-nodes`}},
		{name: "target changes within the range", old: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4", ElasticTargetNodes: "4"},
			job: map[string]string{ElasticMinNodes: "1", ElasticMaxNodes: "4", ElasticTargetNodes: "2"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := errStrings(ValidateTrainJob(tc.old, tc.job, tc.defaults))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestValidateRuntime(t *testing.T) {
	got := errStrings(ValidateRuntime(map[string]string{
		TTLSecondsAfterFinished: "60", ElasticMinNodes: "1", ElasticMaxNodes: "2", ElasticTargetNodes: "2",
	}))
	want := []string{`metadata.annotations[elastic.gantry.dev/target-nodes]: Forbidden: is set on a TrainJob, not on its runtime`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

func TestParse(t *testing.T) {
	cases := []struct {
		name        string
		job, dflt   map[string]string
		wantTTL     TTL
		wantElastic *Elastic
	}{
		{name: "nothing", wantTTL: TTL{CleanPods: CleanNone}},
		{name: "job over runtime", dflt: map[string]string{TTLSecondsAfterFinished: "60", TTLCleanPods: "All", ElasticMinNodes: "1", ElasticMaxNodes: "4"},
			job:         map[string]string{TTLSecondsAfterFinished: "5", ElasticMaxRestarts: "7", "other": "x"},
			wantTTL:     TTL{After: ptr.To(5 * time.Second), CleanPods: CleanAll},
			wantElastic: &Elastic{MinNodes: 1, MaxNodes: 4, MaxRestarts: 7}},
		{name: "default restarts and a target", job: map[string]string{ElasticMinNodes: "2", ElasticMaxNodes: "2", ElasticTargetNodes: "2"},
			wantTTL: TTL{CleanPods: CleanNone}, wantElastic: &Elastic{MinNodes: 2, MaxNodes: 2, MaxRestarts: 3, Target: ptr.To[int32](2)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			eff := Effective(tc.job, Defaults(tc.dflt))
			ttl, errs := ParseTTL(eff)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.wantTTL, ttl); diff != "" {
				t.Errorf("TTL (-want +got):\n%s", diff)
			}
			e, errs := ParseElastic(eff)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			if diff := cmp.Diff(tc.wantElastic, e); diff != "" {
				t.Errorf("Elastic (-want +got):\n%s", diff)
			}
		})
	}
}
