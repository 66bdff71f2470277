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
	"testing"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/trainjob"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestScale covers the decisions of an elastic TrainJob's scale: the JobSet is patched only
// when JobSet allows it, and every refusal is a Scaled=False condition with its reason.
func TestScale(t *testing.T) {
	cases := map[string]struct {
		target    string
		labels    map[string]string
		finished  bool
		dryErr    error
		wantNodes int32
		wantCond  []string // status, reason
		wantDry   int
		wantErr   bool
		suspended bool
		// jobSetDone: the JobSet completed, and the scale reads it as the cache holds it
		// (cached.Transform), before the TrainJob's status says so.
		jobSetDone bool
		// workload: a Kueue Workload of the TrainJob exists; listErr: listing them fails;
		// noKueue: the Workload kind is not served.
		workload bool
		listErr  error
		noKueue  bool
		// noSnapshot: the cache holds no runtime snapshot of the TrainJob yet.
		noSnapshot  bool
		wantRequeue bool
	}{
		"scales the node job":           {target: "2", wantNodes: 2, wantCond: []string{"True", ReasonScaled}, wantDry: 1},
		"nothing to do at the target":   {target: "4", wantNodes: 4},
		"refused when finished":         {target: "2", finished: true, wantNodes: 4, wantCond: []string{"False", ReasonScaleJobSetDone}},
		"refused for Kueue's TrainJobs": {target: "2", labels: map[string]string{trainjob.QueueLabel: "q"}, wantNodes: 4, wantCond: []string{"False", ReasonScaleKueueManaged}},
		// manageJobsWithoutQueueName, or a parent Kueue manages: no queue label, but a Workload.
		"refused when a Kueue Workload admitted it without a queue label": {target: "2", workload: true, wantNodes: 4,
			wantCond: []string{"False", ReasonScaleKueueManaged}},
		"refused for MultiKueue's copy on a worker": {target: "2", labels: map[string]string{trainjob.PrebuiltWorkloadLabel: "wl"}, wantNodes: 4,
			wantCond: []string{"False", ReasonScaleKueueManaged}},
		"refused when Kueue's Workloads may not be read": {target: "2", listErr: apierrors.NewForbidden(
			schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New("RBAC")), wantNodes: 4,
			wantCond: []string{"False", ReasonScaleKueueManaged}},
		"retried when Kueue's Workloads cannot be read": {target: "2", listErr: apierrors.NewServiceUnavailable("down"), wantNodes: 4,
			wantCond: []string{"False", ReasonScaleFailed}, wantErr: true},
		"waits for the runtime snapshot, which holds the runtime's defaults": {target: "2", noSnapshot: true, wantNodes: 4, wantRequeue: true},
		"scales where Kueue is not installed":                                {target: "2", noKueue: true, wantNodes: 2, wantCond: []string{"True", ReasonScaled}, wantDry: 1},
		"refused when JobSet's gate is off, asked once": {target: "2", dryErr: immutable, wantNodes: 4,
			wantCond: []string{"False", ReasonScaleGateOff}, wantDry: 1},
		"refused for this JobSet alone by a policy, asked again": {target: "2", dryErr: apierrors.NewForbidden(
			schema.GroupResource{Group: "jobset.x-k8s.io", Resource: "jobsets"}, "tj", errors.New("denied by policy")), wantNodes: 4,
			wantCond: []string{"False", ReasonScaleRejected}, wantDry: 2},
		"failed, retried": {target: "2", dryErr: apierrors.NewServiceUnavailable("webhook down"), wantNodes: 4,
			wantCond: []string{"False", ReasonScaleFailed}, wantDry: 2, wantErr: true},
		"not while suspended": {target: "2", suspended: true, wantNodes: 4},
		"refused when the JobSet finished, as cached": {target: "2", jobSetDone: true, wantNodes: 4,
			wantCond: []string{"False", ReasonScaleJobSetDone}},
		"nothing to do at the target when the JobSet finished, as cached": {target: "4", jobSetDone: true, wantNodes: 4},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Annotation(knobs.ElasticMinNodes, "1").
				Annotation(knobs.ElasticMaxNodes, "4").Annotation(knobs.ElasticTargetNodes, tc.target).Obj()
			tj.Labels, tj.UID = tc.labels, "uid-1"
			js := &jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "tj"},
				Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
					{Name: "dataset-initializer"},
					{Name: "node", Template: batchJob(4)},
				}}}
			js.Spec.ReplicatedJobs[1].Template.Labels = map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}
			js.Spec.Suspend = ptr.To(tc.suspended)
			if tc.jobSetDone {
				js.Status.Conditions = []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue}}
			}
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			objs := []client.Object{tj, js}
			if !tc.noSnapshot {
				snapshot := ref.NewSnapshotSkeleton(tj)
				if err := ref.FillSnapshotKnobs(snapshot, nil); err != nil {
					t.Fatal(err)
				}
				objs = append(objs, snapshot)
			}
			mapper := apimeta.NewDefaultRESTMapper(nil)
			for gvk := range sch.AllKnownTypes() {
				mapper.Add(gvk, apimeta.RESTScopeNamespace)
			}
			if !tc.noKueue {
				mapper.Add(trainjob.WorkloadGVK, apimeta.RESTScopeNamespace)
			}
			dryRuns := 0
			c := fake.NewClientBuilder().WithScheme(sch).WithRESTMapper(mapper).WithObjects(objs...).WithInterceptorFuncs(interceptor.Funcs{
				List: func(ctx context.Context, cl client.WithWatch, list client.ObjectList, opts ...client.ListOption) error {
					if list.GetObjectKind().GroupVersionKind() != trainjob.WorkloadListGVK || tc.noKueue {
						return cl.List(ctx, list, opts...)
					}
					// The fake client holds only the scheme's kinds: Kueue's Workloads are answered here.
					lo := &client.ListOptions{}
					lo.ApplyOptions(opts)
					wls := list.(*metav1.PartialObjectMetadataList)
					if tc.workload && lo.Namespace == "ns" && lo.LabelSelector.String() == trainjob.WorkloadJobUIDLabel+"="+string(tj.UID) {
						wls.Items = []metav1.PartialObjectMetadata{{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "trainjob-tj-1234"}}}
					}
					return tc.listErr
				},
				Patch: func(ctx context.Context, cl client.WithWatch, obj client.Object, p client.Patch, opts ...client.PatchOption) error {
					po := &client.PatchOptions{}
					po.ApplyOptions(opts)
					if len(po.DryRun) > 0 {
						dryRuns++
						return tc.dryErr
					}
					return cl.Patch(ctx, obj, p, opts...)
				},
			}).Build()
			r := &TrainJobReconciler{client: c, apiReader: c}
			// Twice: a refusal, or the gate, is found once.
			for range 2 {
				cur := &jobsetv1alpha2.JobSet{}
				if err := c.Get(context.Background(), client.ObjectKeyFromObject(js), cur); err != nil {
					t.Fatal(err)
				}
				if tc.jobSetDone {
					obj, err := cached.Transform(cur)
					if err != nil {
						t.Fatal(err)
					}
					cur = obj.(*jobsetv1alpha2.JobSet)
					if cur.Spec.ReplicatedJobs != nil {
						t.Fatal("the cache's copy of a finished JobSet keeps its replicated jobs")
					}
				}
				s := &scope{tj: tj, status: tj.Status.DeepCopy(), now: metav1.Now(), jobSet: cur}
				if tc.finished {
					s.status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
				}
				res := r.scale(context.Background(), s)
				if res.err != nil {
					t.Fatal(res.err)
				}
				if (res.requeueAfter > 0) != tc.wantRequeue {
					t.Errorf("looks again in %s, want to: %t", res.requeueAfter, tc.wantRequeue)
				}
				if (res.retryErr != nil) != tc.wantErr {
					t.Errorf("error to retry: %v, want one: %t", res.retryErr, tc.wantErr)
				}
				tj.Status = *s.status
			}
			got := &jobsetv1alpha2.JobSet{}
			if err := c.Get(context.Background(), client.ObjectKeyFromObject(js), got); err != nil {
				t.Fatal(err)
			}
			spec := got.Spec.ReplicatedJobs[1].Template.Spec
			if diff := cmp.Diff([]int32{tc.wantNodes, tc.wantNodes}, []int32{*spec.Parallelism, *spec.Completions}); diff != "" {
				t.Errorf("node job parallelism and completions (-want +got):\n%s", diff)
			}
			var cond []string
			if c := apimeta.FindStatusCondition(tj.Status.Conditions, ConditionScaled); c != nil {
				cond = []string{string(c.Status), c.Reason}
			}
			if diff := cmp.Diff(tc.wantCond, cond); diff != "" {
				t.Errorf("Scaled condition (-want +got):\n%s", diff)
			}
			if dryRuns != tc.wantDry {
				t.Errorf("dry-run patches: %d, want %d", dryRuns, tc.wantDry)
			}
		})
	}
}

var immutable = apierrors.NewInvalid(schema.GroupKind{Group: "jobset.x-k8s.io", Kind: "JobSet"}, "tj",
	field.ErrorList{field.Invalid(field.NewPath("spec", "replicatedJobs"), nil, "field is immutable")})

func batchJob(n int32) batchv1.JobTemplateSpec {
	return batchv1.JobTemplateSpec{Spec: batchJobSpec(n)}
}

func batchJobSpec(n int32) batchv1.JobSpec {
	return batchv1.JobSpec{Parallelism: ptr.To(n), Completions: ptr.To(n)}
}

// TestScaleLooksAgainForAJobSetNotCached: a JobSet applied by this reconcile is not in the cache
// yet, and its create event is not watched; the scale of an elastic TrainJob is decided once it
// is, so the reconcile asks to be run again, and only while the JobSet can appear.
func TestScaleLooksAgainForAJobSetNotCached(t *testing.T) {
	cases := map[string]struct {
		target      bool
		suspended   bool
		finished    bool
		buildFailed bool
		want        bool
	}{
		"an elastic TrainJob whose JobSet was just applied": {target: true, want: true},
		"not elastic":                      {},
		"suspended: no JobSet to wait for": {target: true, suspended: true},
		"finished":                         {target: true, finished: true},
		"the build failed":                 {target: true, buildFailed: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			w := utiltesting.MakeTrainJobWrapper("ns", "tj").Suspend(tc.suspended)
			if tc.target {
				w = w.Annotation(knobs.ElasticMinNodes, "1").Annotation(knobs.ElasticMaxNodes, "4").Annotation(knobs.ElasticTargetNodes, "2")
			}
			tj := w.Obj()
			s := &scope{tj: tj, status: tj.Status.DeepCopy(), now: metav1.Now(), buildFailed: tc.buildFailed}
			if tc.finished {
				s.status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
			}
			res := (&TrainJobReconciler{}).scale(context.Background(), s)
			if res.err != nil {
				t.Fatal(res.err)
			}
			if diff := cmp.Diff(tc.want, res.requeueAfter > 0); diff != "" {
				t.Errorf("looks again (-want +got):\n%s", diff)
			}
		})
	}
}
