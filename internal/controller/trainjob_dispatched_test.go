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
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestReconcileDispatched: a TrainJob MultiKueue runs on a worker gets nothing built on the
// manager, but its TTL, once Kueue copied the finished status back.
func TestReconcileDispatched(t *testing.T) {
	cases := map[string]struct {
		finished bool
		// managedBy replaces MultiKueue as the TrainJob's manager.
		managedBy string
		ttl       string
		deleting  bool
		after     time.Duration
		want      ctrl.Result
		wantTJ    bool
		// wantEvents are the reasons of the events recorded.
		wantEvents []string
	}{
		"running on a worker: nothing, not even with a TTL": {ttl: "0", after: time.Hour, wantTJ: true},
		"finished, no TTL: kept":                            {finished: true, after: time.Hour, wantTJ: true},
		"finished, the TTL runs: look again when it ends":   {finished: true, ttl: "60", after: 20 * time.Second, want: ctrl.Result{RequeueAfter: 40 * time.Second}, wantTJ: true},
		"finished, the TTL ended: deleted, told":            {finished: true, ttl: "60", after: time.Minute, wantEvents: []string{ReasonTTLExpired}},
		"being deleted: left to its finalizers":             {finished: true, ttl: "0", deleting: true, after: time.Hour, wantTJ: true},
		"another manager's job: its TTL is that manager's":  {managedBy: "example.com/other", finished: true, ttl: "0", after: time.Hour, wantTJ: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			manager := trainer.ManagedByMultiKueue
			if tc.managedBy != "" {
				manager = tc.managedBy
			}
			w := utiltesting.MakeTrainJobWrapper("ns", "tj").ManagedBy(manager)
			if tc.ttl != "" {
				w = w.Annotation(knobs.TTLSecondsAfterFinished, tc.ttl)
			}
			tj := w.Obj()
			if tc.finished {
				tj.Status.Conditions = []metav1.Condition{condition(trainer.TrainJobComplete, "Done")}
			}
			if tc.deleting {
				tj.Finalizers = []string{"example.com/keep"}
				tj.DeletionTimestamp = &t0
			}
			c := fake.NewClientBuilder().WithScheme(sch).WithObjects(tj).WithStatusSubresource(tj).Build()
			recorder := record.NewFakeRecorder(10)
			r := &TrainJobReconciler{client: c, apiReader: c, recorder: recorder, clock: clocktesting.NewFakePassiveClock(t0.Add(tc.after))}

			got, err := r.Reconcile(context.Background(), ctrl.Request{NamespacedName: client.ObjectKeyFromObject(tj)})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("result (-want,+got):\n%s", diff)
			}
			err = c.Get(context.Background(), client.ObjectKeyFromObject(tj), &trainer.TrainJob{})
			if kept := !apierrors.IsNotFound(err); kept != tc.wantTJ {
				t.Errorf("TrainJob kept: %t (%v), want %t", kept, err, tc.wantTJ)
			}
			jobSets := &jobsetv1alpha2.JobSetList{}
			if err := c.List(context.Background(), jobSets); err != nil {
				t.Fatal(err)
			}
			if len(jobSets.Items) > 0 {
				t.Errorf("a JobSet was built on the manager: %s", jobSets.Items[0].Name)
			}
			// A FakeRecorder's event is "<type> <reason> <message>".
			var reasons []string
			for len(recorder.Events) > 0 {
				reasons = append(reasons, strings.Fields(<-recorder.Events)[1])
			}
			if diff := cmp.Diff(tc.wantEvents, reasons); diff != "" {
				t.Errorf("event reasons (-want,+got):\n%s", diff)
			}
		})
	}
}
