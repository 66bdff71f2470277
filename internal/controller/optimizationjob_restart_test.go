//go:build faults

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
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/faults"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestOptimizationRestartCreatesEachTrialOnce restarts the OptimizationJob controller after
// every trial it creates: the OptimizationCrashAfterTrial fault stops each reconcile right after
// a creation, before the status write, and every reconcile is a new reconciler whose cache has
// not yet seen the trials the previous one created (the list lags one reconcile behind, the
// worst a restarted or lagging informer does). Each trial must be created exactly once.
//
// The second case shows that the test can fail: the OptimizationRandomTrialNames fault gives
// trials generated names, the non-idempotent creation a restart repeats, and the count of
// creations catches the duplicates: with its wantDuplicates removed, that case fails with
// "created N TrainJobs for 5 trials", N above 5.
func TestOptimizationRestartCreatesEachTrialOnce(t *testing.T) {
	cases := map[string]struct {
		faults         []string
		wantDuplicates bool
	}{
		"trials named by their index": {faults: []string{faults.OptimizationCrashAfterTrial}},
		"generated names (the guard)": {
			faults:         []string{faults.OptimizationCrashAfterTrial, faults.OptimizationRandomTrialNames},
			wantDuplicates: true,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			faults.InjectForTest(t, tc.faults...)
			const numTrials = 5
			created, status := runWithRestarts(t, numTrials)
			if tc.wantDuplicates {
				if len(created) <= numTrials {
					t.Fatalf("the guard created %d TrainJobs for %d trials: the duplicate went unnoticed", len(created), numTrials)
				}
				return
			}
			if len(created) != numTrials {
				t.Fatalf("created %d TrainJobs for %d trials: %v", len(created), numTrials, created)
			}
			want := []string{"search-0", "search-1", "search-2", "search-3", "search-4"}
			slices.Sort(created)
			if diff := cmp.Diff(want, created); diff != "" {
				t.Errorf("created trials (-want,+got):\n%s", diff)
			}
			if !meta.IsStatusConditionTrue(status.Conditions, optimization.ConditionComplete) {
				t.Errorf("not complete: %+v", status.Conditions)
			}
			if status.Result == nil || status.Result.TrainJobName != "search-0" {
				t.Errorf("result %+v, want trial search-0 (the lowest loss)", status.Result)
			}
		})
	}
}

// runWithRestarts runs a 5-trial search, 2 at a time, to its end, one restarted reconcile at a
// time, completing every created trial between reconciles; it returns the names of every
// TrainJob created and the final status.
func runWithRestarts(t *testing.T, numTrials int32) ([]string, trainer.OptimizationJobStatus) {
	t.Helper()
	sch, err := scheme.New()
	if err != nil {
		t.Fatal(err)
	}
	oj := utiltesting.MakeOptimizationJobWrapper("ns", "search").UID("uid-1").Trials(numTrials, 2).
		Categorical("opt", "a", "b", "c", "d", "e").Obj()
	var created, lastRound, hidden []string
	c := fake.NewClientBuilder().WithScheme(sch).WithObjects(oj).
		WithStatusSubresource(oj, &trainer.TrainJob{}).
		WithInterceptorFuncs(interceptor.Funcs{
			Create: func(ctx context.Context, c client.WithWatch, obj client.Object, opts ...client.CreateOption) error {
				if err := c.Create(ctx, obj, opts...); err != nil {
					return err
				}
				created = append(created, obj.GetName())
				lastRound = append(lastRound, obj.GetName())
				return nil
			},
			List: func(ctx context.Context, c client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
				if err := c.List(ctx, list, opts...); err != nil {
					return err
				}
				if l, ok := list.(*trainer.TrainJobList); ok {
					l.Items = slices.DeleteFunc(l.Items, func(tj trainer.TrainJob) bool { return slices.Contains(hidden, tj.Name) })
				}
				return nil
			},
		}).Build()
	ctx := ctrl.LoggerInto(context.Background(), ctrl.Log)
	key := client.ObjectKeyFromObject(oj)
	for round := range 50 {
		hidden, lastRound = lastRound, nil
		r, err := NewOptimizationJobReconciler(c, record.NewFakeRecorder(100))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Reconcile(ctx, ctrl.Request{NamespacedName: key}); err != nil && !errors.Is(err, errCrashAfterTrial) {
			t.Fatalf("round %d: %v", round, err)
		}
		got := &trainer.OptimizationJob{}
		if err := c.Get(ctx, key, got); err != nil {
			t.Fatal(err)
		}
		if endedCondition(got) != nil {
			return created, got.Status
		}
		completeTrials(ctx, t, c)
	}
	t.Fatalf("the search did not end in 50 reconciles; created %v", created)
	return nil, trainer.OptimizationJobStatus{}
}

// completeTrials marks every unfinished trial Complete with loss equal to its index.
func completeTrials(ctx context.Context, t *testing.T, c client.Client) {
	t.Helper()
	list := &trainer.TrainJobList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	for i := range list.Items {
		tj := &list.Items[i]
		if meta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) {
			continue
		}
		tj.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue,
			Reason: "JobSetCompleted", Message: "done", LastTransitionTime: metav1.Now()}}
		tj.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{LastUpdatedTime: metav1.Now(),
			Metrics: []trainer.Metric{{Name: "loss", Value: tj.Labels[optimization.TrialIndexLabel]}}}
		if err := c.Status().Update(ctx, tj); err != nil {
			t.Fatal(fmt.Errorf("completing %s: %w", tj.Name, err))
		}
	}
}
