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
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestPhaseOrder pins the reconcile's phases and their order: each reads what the ones before it
// computed (the JobSet read before the build, the build's error kept by the status mirror, the
// ending conditions decided on the mirrored status).
func TestPhaseOrder(t *testing.T) {
	names := func(phases []phase) []string {
		var out []string
		for _, p := range phases {
			out = append(out, p.name)
		}
		return out
	}
	want := [][]string{
		{"runtime-kind", "read-jobset", "build", "mirror-status", "suspended", "scale", "jobset-deleted", "deadline"},
		{"observe-finish", "after-finish", "ttl"},
	}
	if diff := cmp.Diff(want, [][]string{names(beforeStatusWrite), names(afterStatusWrite)}); diff != "" {
		t.Errorf("phases before and after the status write (-want,+got):\n%s", diff)
	}
}

// TestRunPhases is the merge of the phases' results: what runs, whether the status is written,
// which events are emitted when, which error is returned and when the reconcile comes back.
func TestRunPhases(t *testing.T) {
	event := func(reason string) queuedEvent {
		return queuedEvent{eventType: corev1.EventTypeWarning, reason: reason, message: reason}
	}
	errA, errB := errors.New("a failed"), errors.New("b failed")
	cases := map[string]struct {
		before, after map[string]phaseResult
		writeErr      error
		// wantLog is what happened in order: the phases run, the status write, the events.
		wantLog      []string
		wantResult   ctrl.Result
		wantErr      string
		wantTerminal bool
		wantWritten  bool
	}{
		"every phase runs; the events follow the write; the earliest requeue wins": {
			before:      map[string]phaseResult{"b1": {requeueAfter: time.Minute, events: []queuedEvent{event("E1")}}, "b2": {requeueAfter: time.Second, events: []queuedEvent{event("E2")}}},
			after:       map[string]phaseResult{"a1": {requeueAfter: time.Hour, events: []queuedEvent{event("E3")}}},
			wantLog:     []string{"run b1", "run b2", "write", "event E1", "event E2", "run a1", "event E3"},
			wantResult:  ctrl.Result{RequeueAfter: time.Second},
			wantWritten: true,
		},
		"an error before the write: no later phase, no write, no event": {
			before:  map[string]phaseResult{"b1": {events: []queuedEvent{event("E1")}, retryErr: errB}, "b2": {err: errA}},
			wantLog: []string{"run b1", "run b2"},
			wantErr: "reconcile phase b2: a failed",
		},
		"the status decided: the other phases before the write skipped, those after it run": {
			before:      map[string]phaseResult{"b1": {skipToWrite: true, events: []queuedEvent{event("E1")}}, "b2": {events: []queuedEvent{event("E2")}}},
			after:       map[string]phaseResult{"a1": {requeueAfter: time.Second}},
			wantLog:     []string{"run b1", "write", "event E1", "run a1"},
			wantResult:  ctrl.Result{RequeueAfter: time.Second},
			wantWritten: true,
		},
		"errors to retry: the status written and every phase run first, joined in phase order, no requeue": {
			before:      map[string]phaseResult{"b1": {retryErr: errA, events: []queuedEvent{event("E1")}}, "b2": {retryErr: errB, requeueAfter: time.Second}},
			after:       map[string]phaseResult{"a1": {requeueAfter: time.Second}},
			wantLog:     []string{"run b1", "run b2", "write", "event E1", "run a1"},
			wantErr:     "reconcile phase b1: a failed\nreconcile phase b2: b failed",
			wantWritten: true,
		},
		"a terminal error to retry stays terminal": {
			before:       map[string]phaseResult{"b1": {retryErr: reconcile.TerminalError(errA)}, "b2": {retryErr: errB}},
			wantLog:      []string{"run b1", "run b2", "write"},
			wantErr:      "reconcile phase b1: terminal error: a failed\nreconcile phase b2: b failed",
			wantTerminal: true,
			wantWritten:  true,
		},
		"the write fails: the errors to retry joined with its own, no event, no later phase": {
			before:   map[string]phaseResult{"b1": {retryErr: errA, events: []queuedEvent{event("E1")}}},
			after:    map[string]phaseResult{"a1": {}},
			writeErr: apierrors.NewServiceUnavailable("down"),
			wantLog:  []string{"run b1", "write"},
			wantErr:  "reconcile phase b1: a failed\nupdating the TrainJob status: down",
		},
		"an error after the write: its events emitted, no later phase": {
			before:      map[string]phaseResult{"b1": {}},
			after:       map[string]phaseResult{"a1": {err: errA, events: []queuedEvent{event("E1")}}, "a2": {}},
			wantLog:     []string{"run b1", "write", "run a1", "event E1"},
			wantErr:     "reconcile phase a1: a failed",
			wantWritten: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var log []string
			phases := func(results map[string]phaseResult) []phase {
				var out []phase
				for _, n := range []string{"b1", "b2", "a1", "a2"} {
					if res, ok := results[n]; ok {
						out = append(out, phase{name: n, run: func(_ *TrainJobReconciler, _ context.Context, s *scope) phaseResult {
							log = append(log, "run "+n)
							s.status.Conditions = append(s.status.Conditions, metav1.Condition{Type: n, Status: metav1.ConditionTrue, Reason: n, LastTransitionTime: t0})
							return res
						}})
					}
				}
				return out
			}
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			c := statusClient(t, tj, func() error {
				log = append(log, "write")
				return tc.writeErr
			})
			r := &TrainJobReconciler{client: c, recorder: &logRecorder{log: &log}}
			s := &scope{tj: tj, status: tj.Status.DeepCopy()}
			got, err := r.runPhases(context.Background(), s, phases(tc.before), phases(tc.after))
			if diff := cmp.Diff(tc.wantLog, log); diff != "" {
				t.Errorf("what ran (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantResult, got); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantErr, errOrEmpty(err)); diff != "" {
				t.Errorf("error (-want,+got):\n%s", diff)
			}
			if terminal := errors.Is(err, reconcile.TerminalError(nil)); terminal != tc.wantTerminal {
				t.Errorf("terminal: %t, want %t", terminal, tc.wantTerminal)
			}
			stored := &trainer.TrainJob{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(tj), stored); err != nil {
				t.Fatal(err)
			}
			if written := len(stored.Status.Conditions) > 0; written != tc.wantWritten {
				t.Errorf("status written: %t, want %t", written, tc.wantWritten)
			}
		})
	}
}

func errOrEmpty(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// statusClient is a fake client holding objs whose status writes call write first, which may
// fail them.
func statusClient(t *testing.T, tj *trainer.TrainJob, write func() error, objs ...client.Object) client.WithWatch {
	t.Helper()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	return fake.NewClientBuilder().WithScheme(sch).WithObjects(append(objs, tj)...).WithStatusSubresource(tj).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				if err := write(); err != nil {
					return err
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
}

// logRecorder records each event as "event <reason>" in log.
type logRecorder struct{ log *[]string }

func (l *logRecorder) Event(_ runtime.Object, _, reason, _ string) {
	*l.log = append(*l.log, "event "+reason)
}

func (l *logRecorder) Eventf(obj runtime.Object, eventType, reason, format string, args ...any) {
	l.Event(obj, eventType, reason, fmt.Sprintf(format, args...))
}

func (l *logRecorder) AnnotatedEventf(obj runtime.Object, _ map[string]string, eventType, reason, format string, args ...any) {
	l.Eventf(obj, eventType, reason, format, args...)
}

// readFails fails every read of the kind of obj.
func readFails(gvk schema.GroupVersionKind) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		if gvks, _, _ := c.Scheme().ObjectKinds(obj); len(gvks) > 0 && gvks[0] == gvk {
			return apierrors.NewServiceUnavailable("down")
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}
