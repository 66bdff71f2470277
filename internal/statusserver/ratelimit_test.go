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

package statusserver

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBucket(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	at := t0.Add
	cases := map[string]struct {
		rate  float64
		burst int
		calls []time.Time
		want  []string
	}{
		"the burst, then waits up to 2 s, then refusals that take nothing": {
			rate: 1, burst: 2, calls: []time.Time{t0, t0, t0, t0, t0, t0},
			want: []string{"0s", "0s", "1s", "2s", "refused, 3s", "refused, 3s"},
		},
		"tokens come back with time, up to the burst": {
			rate: 2, burst: 2, calls: []time.Time{t0, t0, at(500 * time.Millisecond), at(time.Hour), at(time.Hour), at(time.Hour)},
			want: []string{"0s", "0s", "0s", "0s", "0s", "500ms"},
		},
		"a clock going back refills nothing": {
			rate: 1, burst: 1, calls: []time.Time{t0, at(-time.Minute)},
			want: []string{"0s", "1s"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			b := newBucket(tc.rate, tc.burst, t0)
			var got []string
			for _, now := range tc.calls {
				wait, ok := b.reserve(now, 2*time.Second)
				if ok {
					got = append(got, wait.String())
				} else {
					got = append(got, "refused, "+wait.String())
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("reservations (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestLimiterBounded: buckets that have refilled are dropped to make room; when none has, all
// are, so the map never holds more than its bound.
func TestLimiterBounded(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	l := newLimiter(1, 2, 3, 0)
	for i := range 3 {
		l.reserve(fmt.Sprint(i), t0)
	}
	// "0" used twice more at t0+1s has not refilled by t0+2s; "1" and "2" have.
	l.reserve("0", t0.Add(time.Second))
	l.reserve("0", t0.Add(time.Second))
	l.reserve("3", t0.Add(2*time.Second))
	if diff := cmp.Diff([]string{"0", "3"}, keys(l)); diff != "" {
		t.Errorf("buckets after the refilled ones were dropped (-want,+got):\n%s", diff)
	}
	l.reserve("4", t0.Add(2*time.Second))
	l.reserve("5", t0.Add(2*time.Second))
	if diff := cmp.Diff([]string{"5"}, keys(l)); diff != "" {
		t.Errorf("buckets after all were busy (-want,+got):\n%s", diff)
	}
	// A dropped bucket starts full again: "0" has its burst.
	for range 2 {
		if _, ok := l.reserve("0", t0.Add(2*time.Second)); !ok {
			t.Error("a dropped TrainJob did not get its burst back")
		}
	}
}

func keys(l *limiter) []string {
	var out []string
	for k := range l.buckets {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestSharedLimiterNil(t *testing.T) {
	s := newSharedLimiter(0, 0, time.Second, time.Now())
	if wait, ok := s.reserve(time.Now()); !ok || wait != 0 {
		t.Errorf("no write budget: reserve() = %v, %v; want 0, true", wait, ok)
	}
}
