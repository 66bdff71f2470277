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

package main

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

func TestCurveAt(t *testing.T) {
	c := Curve{Duration: 10 * time.Second, Rate: 2, Initial: 2, Floor: 0.5}
	cases := map[string]struct {
		curve   Curve
		elapsed time.Duration
		want    Point
	}{
		"start":                  {curve: c, elapsed: 0, want: Point{Percent: 0, ETASeconds: 10, Loss: 2.5}},
		"before start":           {curve: c, elapsed: -time.Second, want: Point{Percent: 0, ETASeconds: 10, Loss: 2.5}},
		"half: 2·e^-1 + 0.5":     {curve: c, elapsed: 5 * time.Second, want: Point{Percent: 50, ETASeconds: 5, Loss: 1.2357588823428847}},
		"rounded down and up":    {curve: c, elapsed: 9999 * time.Millisecond, want: Point{Percent: 99, ETASeconds: 1, Loss: 0.7707247060002922}},
		"end: 2·e^-2 + 0.5":      {curve: c, elapsed: 10 * time.Second, want: Point{Percent: 100, ETASeconds: 0, Loss: 0.7706705664732254}},
		"after the end":          {curve: c, elapsed: time.Minute, want: Point{Percent: 100, ETASeconds: 0, Loss: 0.7706705664732254}},
		"no duration: the end":   {curve: Curve{Rate: 1, Initial: 1}, elapsed: 0, want: Point{Percent: 100, Loss: 0.36787944117144233}},
		"a faster rate is lower": {curve: Curve{Duration: time.Second, Rate: 4, Initial: 2.5, Floor: 0.1}, elapsed: time.Second, want: Point{Percent: 100, Loss: 0.14578909722183545}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, tc.curve.At(tc.elapsed)); diff != "" {
				t.Errorf("At(%s) (-want +got):\n%s", tc.elapsed, diff)
			}
		})
	}
}

func TestPointStatus(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 600_000_000, time.UTC)
	got := Point{Percent: 42, ETASeconds: 7, Loss: 0.12345678}.Status(now)
	want := &trainer.TrainJobTrainerStatus{
		ProgressPercentage: ptr.To[int32](42), EstimatedRemainingSeconds: ptr.To[int32](7),
		Metrics:         []trainer.Metric{{Name: "loss", Value: "0.123457"}},
		LastUpdatedTime: metav1.NewTime(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Status (-want +got):\n%s", diff)
	}
}

func TestCurveOf(t *testing.T) {
	env := func(kv ...string) *corev1.Container {
		c := &corev1.Container{Name: "node"}
		for i := 0; i < len(kv); i += 2 {
			c.Env = append(c.Env, corev1.EnvVar{Name: kv[i], Value: kv[i+1]})
		}
		return c
	}
	pod := func(annotations map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Annotations: annotations}}
	}
	def := Curve{Duration: 5 * time.Second, Rate: 3, Initial: 2.5, Floor: 0.1}
	cases := map[string]struct {
		pod       *corev1.Pod
		container *corev1.Container
		want      Curve
		wantErr   string
	}{
		"defaults": {pod: pod(nil), container: env(), want: def},
		"the env sets the rate (a trial parameter)": {
			pod: pod(nil), container: env(EnvLossRate, "0.5"),
			want: Curve{Duration: 5 * time.Second, Rate: 0.5, Initial: 2.5, Floor: 0.1},
		},
		"annotations set every knob and the duration": {
			pod: pod(map[string]string{
				AnnotationDuration: "30s", AnnotationLossRate: "2", AnnotationLossInitial: "4", AnnotationLossFloor: "0",
			}),
			container: env(),
			want:      Curve{Duration: 30 * time.Second, Rate: 2, Initial: 4, Floor: 0},
		},
		"the env wins over the annotation": {
			pod: pod(map[string]string{AnnotationLossRate: "2"}), container: env(EnvLossRate, " 7 "),
			want: Curve{Duration: 5 * time.Second, Rate: 7, Initial: 2.5, Floor: 0.1},
		},
		"not a number": {
			pod: pod(nil), container: env(EnvLossRate, "${trialParameters.lr}"),
			wantErr: `env GANTRY_SIM_LOSS_RATE: "${trialParameters.lr}" is not a number`,
		},
		"not finite":     {pod: pod(map[string]string{AnnotationLossFloor: "NaN"}), container: env(), wantErr: `annotation sim.gantry.dev/loss-floor: "NaN" is not a number`},
		"a bad duration": {pod: pod(map[string]string{AnnotationDuration: "soon"}), container: env(), wantErr: `annotation sim.gantry.dev/duration: "soon" is not a duration`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := curveOf(tc.pod, tc.container, 5*time.Second)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("curveOf (-want +got):\n%s", diff)
			}
		})
	}
}

func TestScheduleDue(t *testing.T) {
	s := schedule{interval: time.Second, finalLead: 500 * time.Millisecond}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	type due struct{ Send, Final bool }
	cases := map[string]struct {
		now      time.Duration
		duration time.Duration
		st       jobState
		want     due
	}{
		"first report at once":                {now: 0, duration: 10 * time.Second, want: due{Send: true}},
		"within the interval":                 {now: 1500 * time.Millisecond, duration: 10 * time.Second, st: jobState{last: at(time.Second)}, want: due{}},
		"an interval after the last":          {now: 2 * time.Second, duration: 10 * time.Second, st: jobState{last: at(time.Second)}, want: due{Send: true}},
		"none within an interval of the last": {now: 9 * time.Second, duration: 10 * time.Second, st: jobState{last: at(8 * time.Second)}, want: due{}},
		"the last report, before the end":     {now: 9500 * time.Millisecond, duration: 10 * time.Second, st: jobState{last: at(8 * time.Second)}, want: due{Send: true, Final: true}},
		"the last report is sent once":        {now: 9800 * time.Millisecond, duration: 10 * time.Second, st: jobState{finalSent: true}, want: due{}},
		"after a 429, not before its wait": {
			now: 3 * time.Second, duration: 10 * time.Second, st: jobState{last: at(time.Second), notBefore: at(4 * time.Second)}, want: due{},
		},
		"a run shorter than the lead: the last report only": {now: 0, duration: 300 * time.Millisecond, want: due{Send: true, Final: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			send, final := s.due(at(tc.now), t0, tc.duration, tc.st)
			if diff := cmp.Diff(tc.want, due{send, final}); diff != "" {
				t.Errorf("due (-want +got):\n%s", diff)
			}
		})
	}
}
