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
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/metrics"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/trainjob"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// phaseFixture is what a phase test starts from: the TrainJob (UID uid-1), its JobSet when it has
// one, and the fake API server's answers.
type phaseFixture struct {
	tj    *trainer.TrainJob
	js    *jobsetv1alpha2.JobSet
	funcs interceptor.Funcs
	now   time.Time
}

// run runs one phase on the fixture with a fresh scope, the JobSet as the cache would hand it.
func (f phaseFixture) run(t *testing.T, p func(*TrainJobReconciler, context.Context, *scope) phaseResult) (phaseResult, *scope, client.Client) {
	t.Helper()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	f.tj.UID = "uid-1"
	objs := []client.Object{f.tj}
	if f.js != nil {
		f.js.OwnerReferences = []metav1.OwnerReference{{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind,
			Name: f.tj.Name, UID: f.tj.UID, Controller: ptr.To(true)}}
		objs = append(objs, f.js)
	}
	c := fake.NewClientBuilder().WithScheme(sch).WithObjects(objs...).WithStatusSubresource(f.tj).Build()
	// The fixture's reads are not the phase's: they do not fail.
	fc := interceptor.NewClient(c, f.funcs)
	applier, err := apply.NewApplier(fc, fc, FieldOwner)
	if err != nil {
		t.Fatal(err)
	}
	rt, err := plugins.NewRuntime(framework.Options{})
	if err != nil {
		t.Fatal(err)
	}
	now := f.now
	if now.IsZero() {
		now = t0.Time
	}
	r := &TrainJobReconciler{client: fc, apiReader: fc, runtime: rt, applier: applier, clock: clocktesting.NewFakePassiveClock(now)}
	// The TrainJob and its JobSet as the cache would hand them.
	tj := &trainer.TrainJob{}
	if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.tj), tj); err != nil {
		t.Fatal(err)
	}
	s := &scope{tj: tj, status: tj.Status.DeepCopy(), now: metav1.NewTime(now)}
	if f.js != nil {
		s.jobSet = &jobsetv1alpha2.JobSet{}
		if err := c.Get(context.Background(), client.ObjectKeyFromObject(f.js), s.jobSet); err != nil {
			t.Fatal(err)
		}
	}
	return p(r, context.Background(), s), s, c
}

// outcome is a phase result as the tests compare it: whether it stops or retries, and the
// reasons of its events.
type outcome struct {
	Err, Retry, SkipToWrite bool
	RequeueAfter            time.Duration
	Events                  []string
}

func outcomeOf(res phaseResult) outcome {
	o := outcome{Err: res.err != nil, Retry: res.retryErr != nil, SkipToWrite: res.skipToWrite, RequeueAfter: res.requeueAfter}
	for _, e := range res.events {
		o.Events = append(o.Events, e.reason)
	}
	return o
}

// conditions are a status's conditions as "Type=Status/Reason".
func conditions(status *trainer.TrainJobStatus) []string {
	var out []string
	for _, c := range status.Conditions {
		out = append(out, c.Type+"="+string(c.Status)+"/"+c.Reason)
	}
	return out
}

func condition(typ, reason string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, LastTransitionTime: t0}
}

func testJobSet(finalizers ...string) *jobsetv1alpha2.JobSet {
	return &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tj", Finalizers: finalizers}}
}

func deleting(js *jobsetv1alpha2.JobSet) *jobsetv1alpha2.JobSet {
	js.DeletionTimestamp = &t0
	return js
}

// storedJobSet is the JobSet's finalizers on the fake API server, or "gone".
func storedJobSet(t *testing.T, c client.Client) []string {
	t.Helper()
	js := &jobsetv1alpha2.JobSet{}
	err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "tj"}, js)
	if apierrors.IsNotFound(err) {
		return []string{"gone"}
	}
	if err != nil {
		t.Fatal(err)
	}
	return js.Finalizers
}

func TestCheckRuntimeKind(t *testing.T) {
	cases := map[string]struct {
		kind     string
		want     outcome
		wantCond []string
	}{
		"a runtime kind: go on":            {kind: trainer.ClusterTrainingRuntimeKind},
		"no runtime kind: failed, written": {kind: "Deployment", want: outcome{SkipToWrite: true}, wantCond: []string{"Failed=True/" + trainer.TrainJobRuntimeNotSupportedReason}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := phaseFixture{tj: utiltesting.MakeTrainJobWrapper("ns", "tj").RuntimeRef(tc.kind, "rt").Obj()}
			res, s, _ := f.run(t, (*TrainJobReconciler).checkRuntimeKind)
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCond, conditions(s.status)); diff != "" {
				t.Errorf("conditions (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestReadJobSet(t *testing.T) {
	cases := map[string]struct {
		js         *jobsetv1alpha2.JobSet
		foreign    bool
		readFails  bool
		want       outcome
		wantJobSet bool
	}{
		"none":                                 {},
		"the TrainJob's":                       {js: testJobSet(), wantJobSet: true},
		"another owner's: not the TrainJob's":  {js: testJobSet(), foreign: true},
		"the cache cannot be read: stops here": {readFails: true, want: outcome{Err: true}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			f := phaseFixture{tj: utiltesting.MakeTrainJobWrapper("ns", "tj").Obj(), js: tc.js}
			if tc.readFails {
				f.funcs = readFails(jobsetv1alpha2.GroupVersion.WithKind("JobSet"))
			}
			if tc.foreign {
				f.funcs = interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
					err := c.Get(ctx, key, obj, opts...)
					if js, ok := obj.(*jobsetv1alpha2.JobSet); ok {
						js.OwnerReferences[0].UID = "someone-else"
					}
					return err
				}}
			}
			res, s, _ := f.run(t, func(r *TrainJobReconciler, ctx context.Context, s *scope) phaseResult {
				s.jobSet = nil // read by the phase, not handed over
				return r.readJobSet(ctx, s)
			})
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if got := s.jobSet != nil; got != tc.wantJobSet {
				t.Errorf("JobSet read: %t, want %t", got, tc.wantJobSet)
			}
		})
	}
}

// TestBuildUnfinished: a finished TrainJob is never built, nor one whose JobSet is going or went
// away while it ran; a failed build is written into the status, told once and retried.
func TestBuildUnfinished(t *testing.T) {
	jobs := []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1)}}
	cases := map[string]struct {
		suspend    bool
		status     trainer.TrainJobStatus
		js         *jobsetv1alpha2.JobSet
		funcs      interceptor.Funcs
		want       outcome
		wantBuild  bool // a build ran, and failed: the runtime does not exist
		wantGone   bool
		wantJobSet []string
	}{
		"the runtime is missing: a build error, told, retried": {
			want: outcome{Retry: true, Events: []string{ReasonResourcesCreationFailed}}, wantBuild: true, wantJobSet: []string{"gone"},
		},
		"finished: never built again": {
			status: trainer.TrainJobStatus{Conditions: []metav1.Condition{condition(trainer.TrainJobComplete, "Done")}}, wantJobSet: []string{"gone"},
		},
		"the JobSet is going while the TrainJob runs: left to go": {
			js: deleting(testJobSet(OutcomeFinalizer)), wantJobSet: []string{OutcomeFinalizer},
		},
		"the JobSet is going while the TrainJob is suspended: let go": {
			suspend: true, js: deleting(testJobSet(OutcomeFinalizer)), wantJobSet: []string{"gone"},
		},
		"the JobSet the TrainJob had is gone, confirmed around the cache: not built again": {
			status: trainer.TrainJobStatus{JobsStatus: jobs}, wantGone: true, wantJobSet: []string{"gone"},
		},
		"the JobSet cannot be confirmed gone: stops here": {
			status: trainer.TrainJobStatus{JobsStatus: jobs}, funcs: readFails(trainer.GroupVersion.WithKind(trainer.TrainJobKind)),
			want: outcome{Err: true}, wantJobSet: []string{"gone"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(tc.suspend).Obj()
			tj.Status = tc.status
			res, s, c := phaseFixture{tj: tj, js: tc.js, funcs: tc.funcs}.run(t, (*TrainJobReconciler).buildUnfinished)
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if built := s.status.BuildError != nil && s.buildFailed; built != tc.wantBuild {
				t.Errorf("build failed: %t (%v), want %t", built, s.status.BuildError, tc.wantBuild)
			}
			if s.jobSetGone != tc.wantGone {
				t.Errorf("JobSet gone: %t, want %t", s.jobSetGone, tc.wantGone)
			}
			if diff := cmp.Diff(tc.wantJobSet, storedJobSet(t, c)); diff != "" {
				t.Errorf("the JobSet's finalizers (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestMirrorStatus: the JobSet's status becomes the TrainJob's, but for what this reconcile's
// build found and the terminal condition the TrainJob already had.
func TestMirrorStatus(t *testing.T) {
	buildErr := &trainer.TrainJobBuildError{Message: "runtime not found", Time: t0}
	cases := map[string]struct {
		status         trainer.TrainJobStatus
		jobSetCond     *metav1.Condition
		want           []string
		wantBuildError bool
	}{
		"no JobSet yet: this build's error kept": {wantBuildError: true},
		"the JobSet completed: Complete": {
			jobSetCond: &metav1.Condition{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue, Reason: "AllJobsCompleted"},
			want:       []string{"Complete=True/AllJobsCompleted"}, wantBuildError: true,
		},
		"failed for its deadline, then the JobSet failed: the deadline's reason kept": {
			status:     trainer.TrainJobStatus{Conditions: []metav1.Condition{condition(trainer.TrainJobFailed, trainer.TrainJobDeadlineExceededReason)}},
			jobSetCond: &metav1.Condition{Type: string(jobsetv1alpha2.JobSetFailed), Status: metav1.ConditionTrue, Reason: "FailedJobs"},
			want:       []string{"Failed=True/" + trainer.TrainJobDeadlineExceededReason}, wantBuildError: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			tj.Status = tc.status
			f := phaseFixture{tj: tj}
			if tc.jobSetCond != nil {
				f.js = testJobSet()
				f.js.Status.Conditions = []metav1.Condition{*tc.jobSetCond}
			}
			res, s, _ := f.run(t, func(r *TrainJobReconciler, ctx context.Context, s *scope) phaseResult {
				s.status.BuildError = buildErr // what the build phase found
				return r.mirrorStatus(ctx, s)
			})
			if diff := cmp.Diff(outcome{}, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.want, conditions(s.status)); diff != "" {
				t.Errorf("conditions (-want,+got):\n%s", diff)
			}
			if got := s.status.BuildError != nil; got != tc.wantBuildError {
				t.Errorf("build error kept: %t, want %t", got, tc.wantBuildError)
			}
		})
	}
}

// TestStatusPhases covers the phases that only compute conditions from the scope: suspension,
// the JobSet deleted under a running TrainJob, and the deadline.
func TestStatusPhases(t *testing.T) {
	ran := condition(trainer.TrainJobComplete, "Done")
	cases := map[string]struct {
		phase    func(*TrainJobReconciler, context.Context, *scope) phaseResult
		suspend  bool
		deadline int64
		now      time.Time
		status   []metav1.Condition
		js       *jobsetv1alpha2.JobSet
		gone     bool
		want     outcome
		wantCond []string
	}{
		"suspended: Suspended": {phase: (*TrainJobReconciler).suspendedCondition, suspend: true,
			wantCond: []string{"Suspended=True/" + trainer.TrainJobSuspendedReason}},
		"never suspended: no condition": {phase: (*TrainJobReconciler).suspendedCondition},
		"the JobSet is going while the TrainJob runs: failed": {phase: (*TrainJobReconciler).endIfJobSetDeleted,
			js: deleting(testJobSet(OutcomeFinalizer)), wantCond: []string{"Failed=True/" + ReasonJobSetDeleted}},
		"the JobSet was confirmed gone: failed": {phase: (*TrainJobReconciler).endIfJobSetDeleted, gone: true,
			wantCond: []string{"Failed=True/" + ReasonJobSetDeleted}},
		"the JobSet is going while the TrainJob is suspended: nothing": {phase: (*TrainJobReconciler).endIfJobSetDeleted,
			suspend: true, js: deleting(testJobSet(OutcomeFinalizer))},
		"the JobSet is going after the TrainJob finished: nothing": {phase: (*TrainJobReconciler).endIfJobSetDeleted,
			status: []metav1.Condition{ran}, js: deleting(testJobSet(OutcomeFinalizer)), wantCond: []string{"Complete=True/Done"}},
		"the deadline ahead: look again then": {phase: (*TrainJobReconciler).checkDeadline, deadline: 60, now: t0.Add(20 * time.Second),
			want: outcome{RequeueAfter: 40 * time.Second}},
		"the deadline passed: failed": {phase: (*TrainJobReconciler).checkDeadline, deadline: 60, now: t0.Add(time.Minute),
			wantCond: []string{"Failed=True/" + trainer.TrainJobDeadlineExceededReason}},
		"no deadline: nothing": {phase: (*TrainJobReconciler).checkDeadline},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(tc.suspend)
			if tc.deadline > 0 {
				w = w.ActiveDeadlineSeconds(tc.deadline)
			}
			tj := w.Obj()
			tj.CreationTimestamp = t0
			tj.Status.Conditions = tc.status
			res, s, _ := phaseFixture{tj: tj, js: tc.js, now: tc.now}.run(t, func(r *TrainJobReconciler, ctx context.Context, s *scope) phaseResult {
				s.jobSetGone = tc.gone
				return tc.phase(r, ctx, s)
			})
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantCond, conditions(s.status)); diff != "" {
				t.Errorf("conditions (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestObserveFinish: a TrainJob's duration is observed once, by the reconcile that finishes it.
func TestObserveFinish(t *testing.T) {
	done := condition(trainer.TrainJobComplete, "Done")
	cases := map[string]struct {
		before, after []metav1.Condition
		want          uint64
	}{
		"finished by this reconcile": {after: []metav1.Condition{done}, want: 1},
		"finished before":            {before: []metav1.Condition{done}, after: []metav1.Condition{done}},
		"running":                    {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			tj.Status.Conditions = tc.before
			was := observations(t)
			phaseFixture{tj: tj}.run(t, func(r *TrainJobReconciler, ctx context.Context, s *scope) phaseResult {
				s.status.Conditions = tc.after
				return r.observeFinish(ctx, s)
			})
			if diff := cmp.Diff(tc.want, observations(t)-was); diff != "" {
				t.Errorf("durations observed (-want,+got):\n%s", diff)
			}
		})
	}
}

// observations counts the TrainJob durations observed, whatever their outcome.
func observations(t *testing.T) uint64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 16)
	metrics.DurationSeconds.Collect(ch)
	close(ch)
	var n uint64
	for m := range ch {
		out := &dto.Metric{}
		if err := m.Write(out); err != nil {
			t.Fatal(err)
		}
		n += out.GetHistogram().GetSampleCount()
	}
	return n
}

// TestAfterFinish: the JobSet of a TrainJob the cache holds as finished is let go, and deleted
// first when the TrainJob failed for its deadline.
func TestAfterFinish(t *testing.T) {
	patchFails := interceptor.Funcs{Patch: func(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
		return apierrors.NewServiceUnavailable("down")
	}}
	cases := map[string]struct {
		status       []metav1.Condition
		funcs        interceptor.Funcs
		want         outcome
		wantJobSet   []string
		wantDeleting bool
	}{
		"running: kept": {wantJobSet: []string{OutcomeFinalizer}},
		"finished: let go": {status: []metav1.Condition{condition(trainer.TrainJobComplete, "Done")},
			wantJobSet: []string{}},
		// The delete changes the JobSet's version, so the release's optimistic lock fails: the
		// next reconcile, which reads it deleting, lets it go.
		"failed for its deadline: deleted, let go by the next reconcile": {status: []metav1.Condition{condition(trainer.TrainJobFailed, trainer.TrainJobDeadlineExceededReason)},
			want: outcome{Err: true}, wantJobSet: []string{OutcomeFinalizer}, wantDeleting: true},
		"the release fails: stops here": {status: []metav1.Condition{condition(trainer.TrainJobComplete, "Done")}, funcs: patchFails,
			want: outcome{Err: true}, wantJobSet: []string{OutcomeFinalizer}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			tj.Status.Conditions = tc.status
			res, _, c := phaseFixture{tj: tj, js: testJobSet(OutcomeFinalizer), funcs: tc.funcs}.run(t, (*TrainJobReconciler).afterFinish)
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantJobSet, storedJobSet(t, c), cmpEmptyIsNil); diff != "" {
				t.Errorf("the JobSet's finalizers (-want,+got):\n%s", diff)
			}
			if tc.wantDeleting && !apierrors.IsConflict(res.err) {
				t.Errorf("error %v, want a conflict", res.err)
			}
			js := &jobsetv1alpha2.JobSet{}
			if err := c.Get(context.Background(), client.ObjectKey{Namespace: "ns", Name: "tj"}, js); err == nil && js.DeletionTimestamp.IsZero() == tc.wantDeleting {
				t.Errorf("JobSet deleting: %t, want %t", !js.DeletionTimestamp.IsZero(), tc.wantDeleting)
			}
		})
	}
}

var cmpEmptyIsNil = cmp.Comparer(func(a, b []string) bool { return len(a) == 0 && len(b) == 0 || cmp.Equal(a, b) })

// TestCleanUp: the TTL knobs of a TrainJob the cache holds as finished.
func TestCleanUp(t *testing.T) {
	deleteFails := interceptor.Funcs{Delete: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.DeleteOption) error {
		if _, ok := obj.(*trainer.TrainJob); ok {
			return apierrors.NewServiceUnavailable("down")
		}
		return c.Delete(ctx, obj, opts...)
	}}
	cases := map[string]struct {
		running bool
		ttl     string
		clean   knobs.CleanPods
		// multiKueueCopy is a worker's copy of a TrainJob MultiKueue dispatched.
		multiKueueCopy bool
		after          time.Duration
		funcs          interceptor.Funcs
		want           outcome
		wantTJ         bool
		wantJobSet     bool
	}{
		"running: nothing":                      {running: true, ttl: "60", after: time.Hour, wantTJ: true, wantJobSet: true},
		"finished, no TTL: nothing":             {after: time.Hour, wantTJ: true, wantJobSet: true},
		"the TTL runs: look again when it ends": {ttl: "60", after: 20 * time.Second, want: outcome{RequeueAfter: 40 * time.Second}, wantTJ: true, wantJobSet: true},
		"the TTL ended: deleted, told":          {ttl: "60", after: time.Minute, want: outcome{Events: []string{ReasonTTLExpired}}, wantJobSet: true},
		"the delete fails: stops here, told": {ttl: "60", after: time.Minute, funcs: deleteFails,
			want: outcome{Err: true, Events: []string{ReasonTTLExpired}}, wantTJ: true, wantJobSet: true},
		"clean-pods All: the JobSet deleted, told": {clean: knobs.CleanAll, after: time.Hour,
			want: outcome{Events: []string{ReasonPodsCleanedUp}}, wantTJ: true},
		"MultiKueue's worker copy: the TTL is the manager's, the copy is Kueue's to delete": {
			multiKueueCopy: true, ttl: "0", after: time.Hour, wantTJ: true, wantJobSet: true},
		"MultiKueue's worker copy: clean-pods still acts": {multiKueueCopy: true, ttl: "0", clean: knobs.CleanAll, after: time.Hour,
			want: outcome{Events: []string{ReasonPodsCleanedUp}}, wantTJ: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := utiltesting.MakeTrainJobWrapper("ns", "tj")
			if tc.ttl != "" {
				w = w.Annotation(knobs.TTLSecondsAfterFinished, tc.ttl)
			}
			if tc.clean != "" {
				w = w.Annotation(knobs.TTLCleanPods, string(tc.clean))
			}
			if tc.multiKueueCopy {
				w = w.Label(trainjob.MultiKueueOriginLabel, "multikueue")
			}
			tj := w.Obj()
			if !tc.running {
				tj.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobComplete, "Done")}
			}
			res, _, c := phaseFixture{tj: tj, js: testJobSet(), funcs: tc.funcs, now: t0.Add(tc.after)}.run(t, (*TrainJobReconciler).cleanUp)
			if diff := cmp.Diff(tc.want, outcomeOf(res)); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			err := c.Get(context.Background(), client.ObjectKeyFromObject(tj), &trainer.TrainJob{})
			if got := !apierrors.IsNotFound(err); got != tc.wantTJ {
				t.Errorf("TrainJob kept: %t (%v), want %t", got, err, tc.wantTJ)
			}
			if got := !cmp.Equal([]string{"gone"}, storedJobSet(t, c)); got != tc.wantJobSet {
				t.Errorf("JobSet kept: %t, want %t", got, tc.wantJobSet)
			}
		})
	}
}

// TestScalePhaseStops: errors the scale cannot say in the Scaled condition stop the reconcile.
func TestScalePhaseStops(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Annotation(knobs.ElasticTargetNodes, "2").Obj()
	f := phaseFixture{tj: tj, js: testJobSet(), funcs: readFails(corev1.SchemeGroupVersion.WithKind("ConfigMap"))}
	res, s, _ := f.run(t, (*TrainJobReconciler).scale)
	if diff := cmp.Diff(outcome{Err: true}, outcomeOf(res)); diff != "" {
		t.Errorf("result (-want,+got):\n%s", diff)
	}
	if c := apimeta.FindStatusCondition(s.status.Conditions, ConditionScaled); c != nil {
		t.Errorf("Scaled condition %v, want none", c)
	}
	if !apierrors.IsServiceUnavailable(res.err) {
		t.Errorf("error %v, want the read's", res.err)
	}
}
