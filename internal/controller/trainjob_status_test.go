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

package controller

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

var (
	t0 = metav1.NewTime(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC))
	t1 = metav1.NewTime(t0.Add(time.Hour))
)

func TestSetSuspendedCondition(t *testing.T) {
	suspendedCond := metav1.Condition{Type: "Suspended", Status: "True", Reason: "Suspended", Message: "TrainJob is suspended", LastTransitionTime: t0}
	resumedCond := metav1.Condition{Type: "Suspended", Status: "False", Reason: "Resumed", Message: "TrainJob is resumed", LastTransitionTime: t1}
	cases := map[string]struct {
		suspend bool
		before  []metav1.Condition
		want    []metav1.Condition
	}{
		"never suspended: no condition": {},
		"suspended":                     {suspend: true, want: []metav1.Condition{suspendedCond}},
		"still suspended: time kept": {
			suspend: true, before: []metav1.Condition{suspendedCond}, want: []metav1.Condition{suspendedCond},
		},
		"resumed": {before: []metav1.Condition{suspendedCond}, want: []metav1.Condition{resumedCond}},
		"still resumed: time kept": {
			before: []metav1.Condition{resumedCond}, want: []metav1.Condition{resumedCond},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(tc.suspend).Obj()
			status := &trainer.TrainJobStatus{Conditions: tc.before}
			now := t0
			if len(tc.before) > 0 {
				now = t1
			}
			setSuspendedCondition(status, tj, now)
			if diff := cmp.Diff(tc.want, status.Conditions); diff != "" {
				t.Errorf("conditions (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestDeadlineExceeded(t *testing.T) {
	created := t0
	resumed := metav1.Condition{Type: "Suspended", Status: "False", LastTransitionTime: t1}
	failed := metav1.Condition{Type: "Failed", Status: "True"}
	cases := map[string]struct {
		deadline    int64
		suspend     bool
		conditions  []metav1.Condition
		now         time.Time
		wantExpired bool
		wantRequeue time.Duration
	}{
		"no deadline":            {now: t0.Add(time.Hour)},
		"before the deadline":    {deadline: 60, now: t0.Add(20 * time.Second), wantRequeue: 40 * time.Second},
		"at least a second wait": {deadline: 60, now: t0.Add(59*time.Second + 500*time.Millisecond), wantRequeue: time.Second},
		"past the deadline":      {deadline: 60, now: t0.Add(61 * time.Second), wantExpired: true},
		"suspended: no timer":    {deadline: 60, suspend: true, now: t0.Add(time.Hour)},
		"finished: no timer":     {deadline: 60, conditions: []metav1.Condition{failed}, now: t0.Add(time.Hour)},
		"resume restarts the timer": {
			deadline: 60, conditions: []metav1.Condition{resumed}, now: t1.Add(30 * time.Second), wantRequeue: 30 * time.Second,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(tc.suspend).Obj()
			tj.CreationTimestamp = created
			if tc.deadline > 0 {
				tj.Spec.ActiveDeadlineSeconds = ptr.To(tc.deadline)
			}
			expired, requeue := deadlineExceeded(tj, &trainer.TrainJobStatus{Conditions: tc.conditions}, tc.now)
			if diff := cmp.Diff([]any{tc.wantExpired, tc.wantRequeue}, []any{expired, requeue}); diff != "" {
				t.Errorf("deadlineExceeded() (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestKeepTerminalConditions(t *testing.T) {
	deadline := metav1.Condition{Type: "Failed", Status: "True", Reason: "DeadlineExceeded", LastTransitionTime: t0}
	status := &trainer.TrainJobStatus{}
	keepTerminalConditions(status, &trainer.TrainJobStatus{Conditions: []metav1.Condition{
		deadline, {Type: "Suspended", Status: "False", LastTransitionTime: t0},
	}})
	if diff := cmp.Diff([]metav1.Condition{deadline}, status.Conditions); diff != "" {
		t.Errorf("conditions (-want,+got):\n%s", diff)
	}
}

func TestTruncate(t *testing.T) {
	long := string(make([]byte, 1000))
	if got := truncate(long); len(got) != 950+len(" ...") {
		t.Errorf("truncate() length %d", len(got))
	}
	if got := truncate("short"); got != "short" {
		t.Errorf("truncate(short) = %q", got)
	}
}

func TestSetBuildError(t *testing.T) {
	first := &trainer.TrainJobBuildError{Message: "boom", Time: t0}
	long := string(make([]byte, 2000))
	cases := map[string]struct {
		previous *trainer.TrainJobBuildError
		err      error
		want     *trainer.TrainJobBuildError
	}{
		"success clears":               {previous: first},
		"new error":                    {err: errors.New("boom"), want: &trainer.TrainJobBuildError{Message: "boom", Time: t1}},
		"same error keeps its time":    {previous: first, err: errors.New("boom"), want: first},
		"another error gets a new one": {previous: first, err: errors.New("bang"), want: &trainer.TrainJobBuildError{Message: "bang", Time: t1}},
		"long errors are cut":          {err: errors.New(long), want: &trainer.TrainJobBuildError{Message: long[:1020] + " ...", Time: t1}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			status := &trainer.TrainJobStatus{}
			setBuildError(status, tc.previous, tc.err, t1)
			if diff := cmp.Diff(tc.want, status.BuildError); diff != "" {
				t.Errorf("buildError (-want,+got):\n%s", diff)
			}
		})
	}
}
