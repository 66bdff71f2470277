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
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// The knobs of the simulated training run: each is read from the trainer container's env first
// (what an OptimizationJob's ${trialParameters.<name>} can set), then from the pod's annotation
// (what a runtime patch can set), else its default.
const (
	// AnnotationProgress "false" keeps the reporter away from the pod's TrainJob, for a test
	// that reports itself.
	AnnotationProgress = "sim.gantry.dev/progress"
	// AnnotationDuration is kwok's: how long the containers run (the Stages read it too).
	AnnotationDuration = "sim.gantry.dev/duration"

	AnnotationLossRate    = "sim.gantry.dev/loss-rate"
	AnnotationLossInitial = "sim.gantry.dev/loss-initial"
	AnnotationLossFloor   = "sim.gantry.dev/loss-floor"
	EnvLossRate           = "GANTRY_SIM_LOSS_RATE"
	EnvLossInitial        = "GANTRY_SIM_LOSS_INITIAL"
	EnvLossFloor          = "GANTRY_SIM_LOSS_FLOOR"

	// MetricLoss is the one metric reported.
	MetricLoss = "loss"
)

// Defaults of the curve: a loss from 2.5 towards 0.1, at 3 per run (the last report 0.224).
const (
	defaultLossRate    = 3.0
	defaultLossInitial = 2.5
	defaultLossFloor   = 0.1
)

// Curve is a simulated run: at fraction f = elapsed/Duration (0 to 1) of it,
// loss = Initial·exp(−Rate·f) + Floor. The rate is per run, not per second, so the last loss,
// Initial·exp(−Rate) + Floor, does not depend on the pod's duration or on when reports land.
type Curve struct {
	Duration             time.Duration
	Rate, Initial, Floor float64
}

// curveOf reads a pod's curve: the duration from kwok's annotation (else the cluster's pod
// duration), the loss knobs from the trainer container's env or the annotations.
func curveOf(pod *corev1.Pod, container *corev1.Container, podDuration time.Duration) (Curve, error) {
	c := Curve{Duration: podDuration, Rate: defaultLossRate, Initial: defaultLossInitial, Floor: defaultLossFloor}
	if v, ok := pod.Annotations[AnnotationDuration]; ok {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return c, fmt.Errorf("annotation %s: %q is not a duration", AnnotationDuration, v)
		}
		c.Duration = d
	}
	for _, k := range []struct {
		env, annotation string
		into            *float64
	}{
		{EnvLossRate, AnnotationLossRate, &c.Rate},
		{EnvLossInitial, AnnotationLossInitial, &c.Initial},
		{EnvLossFloor, AnnotationLossFloor, &c.Floor},
	} {
		v, from, ok := knob(pod, container, k.env, k.annotation)
		if !ok {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return c, fmt.Errorf("%s: %q is not a number", from, v)
		}
		*k.into = f
	}
	return c, nil
}

// knob is the env value of the container, else the pod's annotation; from names where it was.
func knob(pod *corev1.Pod, container *corev1.Container, env, annotation string) (value, from string, ok bool) {
	for _, e := range container.Env {
		if e.Name == env && e.ValueFrom == nil {
			return e.Value, "env " + env, true
		}
	}
	if v, ok := pod.Annotations[annotation]; ok {
		return v, "annotation " + annotation, true
	}
	return "", "", false
}

// Point is the run's state elapsed into it.
type Point struct {
	Percent    int32
	ETASeconds int32
	Loss       float64
}

// At is the curve's point elapsed into the run: whole percent done (rounded down, so 100 only
// at the end), whole seconds left (rounded up) and the loss.
func (c Curve) At(elapsed time.Duration) Point {
	f := 1.0
	if c.Duration > 0 {
		f = min(1, max(0, float64(elapsed)/float64(c.Duration)))
	}
	left := max(0, c.Duration-max(0, elapsed))
	return Point{
		Percent:    int32(math.Floor(100 * f)),
		ETASeconds: int32(math.Ceil(left.Seconds())),
		Loss:       c.Initial*math.Exp(-c.Rate*f) + c.Floor,
	}
}

// Status is the report of a point, as the Kubeflow SDK sends one. The loss has six significant
// digits: enough to tell trials apart, short enough to read.
func (p Point) Status(now time.Time) *trainer.TrainJobTrainerStatus {
	return &trainer.TrainJobTrainerStatus{
		ProgressPercentage:        ptr.To(p.Percent),
		EstimatedRemainingSeconds: ptr.To(p.ETASeconds),
		Metrics:                   []trainer.Metric{{Name: MetricLoss, Value: strconv.FormatFloat(p.Loss, 'g', 6, 64)}},
		LastUpdatedTime:           metav1.NewTime(now.UTC().Truncate(time.Second)),
	}
}

// schedule is when a job reports: every interval while it runs, and a last time finalLead
// before its pod completes (kwok ends it Duration after it started), so that the value a
// finished TrainJob keeps is the end of the curve.
type schedule struct {
	interval, finalLead time.Duration
}

// jobState is what the reporter remembers of one TrainJob's run.
type jobState struct {
	podUID    string
	last      time.Time
	finalSent bool
	// notBefore holds reports back after a 429, for its Retry-After.
	notBefore time.Time
}

// due says whether to report now, and whether as the last report (elapsed is then the whole
// duration, whatever the clock says).
func (s schedule) due(now, started time.Time, duration time.Duration, st jobState) (send, final bool) {
	if st.finalSent || now.Before(st.notBefore) {
		return false, false
	}
	finalAt := started.Add(max(0, duration-s.finalLead))
	if !now.Before(finalAt) {
		return true, true
	}
	if st.last.IsZero() {
		return true, false
	}
	// No report less than an interval before the last one: reports carry whole seconds
	// (lastUpdatedTime), and the UI's history keeps one point per second, the end of the curve
	// among them.
	return now.Sub(st.last) >= s.interval && !now.Add(s.interval).After(finalAt), false
}
