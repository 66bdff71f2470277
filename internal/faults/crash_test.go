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

package faults

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/util/flowcontrol"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/gantry-ml/gantry/internal/runtime/ref"
)

func TestParseCrashPoint(t *testing.T) {
	cases := map[string]struct {
		faults  []string
		want    string
		wantN   int64
		wantErr bool
	}{
		"none":          {faults: []string{""}},
		"other faults":  {faults: []string{RecreateJobSets}},
		"jobset":        {faults: []string{RecreateJobSets, CrashAfterWrite(PointJobSet, 2)}, want: PointJobSet, wantN: 2},
		"status":        {faults: []string{CrashAfterWrite(PointStatus, 1)}, want: PointStatus, wantN: 1},
		"unknown point": {faults: []string{"crash-after-write=pods:1"}, wantErr: true},
		"zero":          {faults: []string{"crash-after-write=jobset:0"}, wantErr: true},
		"no count":      {faults: []string{"crash-after-write=jobset"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cp, err := parseCrashPoint(tc.faults)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			var got string
			var n int64
			if cp != nil {
				got, n = cp.point, cp.after
			}
			if diff := cmp.Diff([]any{tc.want, tc.wantN}, []any{got, n}); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// TestCrashingClient: the process dies right after the n-th successful write at its point, and
// writes elsewhere or that fail do not count.
func TestCrashingClient(t *testing.T) {
	cm := func(name string) *corev1.ConfigMap {
		return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
	}
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "s"}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "p"}}
	cases := map[string]struct {
		point string
		after int64
		// writes returns the number of the write after which the process was killed, 0 if never.
		writes func(context.Context, client.Client, func() bool) int
		want   int
	}{
		"the second configmap, snapshots aside": {
			point: PointConfigMap, after: 2, want: 3,
			writes: func(ctx context.Context, c client.Client, killed func() bool) int {
				steps := []func() error{
					func() error { return c.Create(ctx, cm("a")) },
					func() error { return c.Create(ctx, cm("job"+ref.SnapshotSuffix)) },
					func() error { return c.Update(ctx, cm("a")) },
					func() error { return c.Create(ctx, cm("b")) },
				}
				return run(steps, killed)
			},
		},
		"a failed write does not count": {
			point: PointSecret, after: 1, want: 2,
			writes: func(ctx context.Context, c client.Client, killed func() bool) int {
				steps := []func() error{
					func() error { return c.Update(ctx, secret) }, // NotFound
					func() error { return c.Create(ctx, secret) },
				}
				return run(steps, killed)
			},
		},
		"status writes": {
			point: PointStatus, after: 1, want: 2,
			writes: func(ctx context.Context, c client.Client, killed func() bool) int {
				steps := []func() error{
					func() error { return c.Create(ctx, cm("d")) },
					func() error { return c.Status().Update(ctx, pod) },
				}
				return run(steps, killed)
			},
		},
		"server-side apply of a snapshot": {
			point: PointSnapshot, after: 1, want: 1,
			writes: func(ctx context.Context, c client.Client, killed func() bool) int {
				u := &unstructured.Unstructured{}
				u.SetAPIVersion("v1")
				u.SetKind("ConfigMap")
				u.SetNamespace("ns")
				u.SetName("job" + ref.SnapshotSuffix)
				steps := []func() error{
					func() error {
						return c.Apply(ctx, client.ApplyConfigurationFromUnstructured(u), client.FieldOwner("t"), client.ForceOwnership)
					},
				}
				return run(steps, killed)
			},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			killed := false
			cp := &crashPoint{point: tc.point, after: tc.after, kill: func() { killed = true }}
			c := &crashingClient{Client: fake.NewClientBuilder().WithScheme(scheme.Scheme).WithObjects(pod.DeepCopy()).WithStatusSubresource(&corev1.Pod{}).Build(), cp: cp}
			got := tc.writes(t.Context(), c, func() bool { return killed })
			if got != tc.want {
				t.Errorf("killed after write %d, want %d", got, tc.want)
			}
		})
	}
}

// run runs the writes in order and returns the 1-based number of the one after which killed
// became true, 0 if it never did.
func run(steps []func() error, killed func() bool) int {
	for i, step := range steps {
		_ = step()
		if killed() {
			return i + 1
		}
	}
	return 0
}

func TestParseThrottle(t *testing.T) {
	cases := map[string]struct {
		faults  []string
		want    []any
		wantErr bool
	}{
		"none":      {faults: []string{RecreateJobSets}, want: []any{0.0, time.Duration(0), false}},
		"2 for 60s": {faults: []string{ThrottleClient(2, time.Minute)}, want: []any{2.0, time.Minute, true}},
		"fraction":  {faults: []string{"throttle-client=0.5:10"}, want: []any{0.5, 10 * time.Second, true}},
		"no time":   {faults: []string{"throttle-client=2"}, wantErr: true},
		"zero qps":  {faults: []string{"throttle-client=0:10"}, wantErr: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			qps, d, ok, err := parseThrottle(tc.faults)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, want error %v", err, tc.wantErr)
			}
			if tc.wantErr {
				return
			}
			if diff := cmp.Diff(tc.want, []any{qps, d, ok}); diff != "" {
				t.Errorf("(-want,+got):\n%s", diff)
			}
		})
	}
}

// TestSwitchingLimiter: the slow limiter applies until the deadline, the normal one after.
func TestSwitchingLimiter(t *testing.T) {
	now := time.Unix(1000, 0)
	l := &switchingLimiter{
		until: now.Add(time.Minute),
		slow:  flowcontrol.NewFakeAlwaysRateLimiter(), normal: flowcontrol.NewFakeNeverRateLimiter(),
		now: func() time.Time { return now },
	}
	before := l.TryAccept()
	now = now.Add(2 * time.Minute)
	after := l.TryAccept()
	if diff := cmp.Diff([]bool{true, false}, []bool{before, after}); diff != "" {
		t.Errorf("TryAccept before and after the deadline (-want,+got):\n%s", diff)
	}
}
