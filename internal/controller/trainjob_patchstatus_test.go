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

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestPatchStatusNeverEmpties covers the write the apiserver would refuse: Kubeflow Trainer
// v2.3's status schema requires at least one property, so a patch leaving `status: {}` fails
// (upstream may drop the rule, kubeflow/trainer#3944). A status with nothing left to say, such as
// a build error cleared before the JobSet reports, is removed instead (`status: null`), which the
// apiserver accepts.
func TestPatchStatusNeverEmpties(t *testing.T) {
	suspended := metav1.Condition{Type: "Suspended", Status: "True", Reason: "Suspended", Message: "TrainJob is suspended", LastTransitionTime: t0}
	jobs := []trainer.JobStatus{{Name: "node", Active: ptr.To[int32](1), Ready: ptr.To[int32](0), Succeeded: ptr.To[int32](0),
		Failed: ptr.To[int32](0), Suspended: ptr.To[int32](0)}}
	cases := map[string]struct {
		before, after trainer.TrainJobStatus
		wantPatch     string
	}{
		"nothing to say, nothing said": {},
		"a first condition": {
			after:     trainer.TrainJobStatus{Conditions: []metav1.Condition{suspended}},
			wantPatch: `{"status":{"conditions":[{"lastTransitionTime":"2026-12-01T10:00:00Z","message":"TrainJob is suspended","reason":"Suspended","status":"True","type":"Suspended"}]}}`,
		},
		"unchanged": {
			before: trainer.TrainJobStatus{JobsStatus: jobs}, after: trainer.TrainJobStatus{JobsStatus: jobs},
		},
		"everything dropped: the status removed, not emptied": {
			before:    trainer.TrainJobStatus{BuildError: &trainer.TrainJobBuildError{Message: "runtime not found", Time: t0}},
			wantPatch: `{"status":null}`,
		},
		"one field dropped, one kept": {
			before:    trainer.TrainJobStatus{JobsStatus: jobs, Conditions: []metav1.Condition{suspended}},
			after:     trainer.TrainJobStatus{Conditions: []metav1.Condition{suspended}},
			wantPatch: `{"status":{"jobsStatus":null}}`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "tj").Obj()
			tj.Status = tc.before
			sch, err := scheme.New()
			if err != nil {
				t.Fatal(err)
			}
			var patches []string
			c := fake.NewClientBuilder().WithScheme(sch).WithObjects(tj).WithStatusSubresource(tj).
				WithInterceptorFuncs(interceptor.Funcs{
					SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
						data, err := p.Data(obj)
						if err != nil {
							return err
						}
						patches = append(patches, string(data))
						return c.SubResource(sub).Patch(ctx, obj, p, opts...)
					},
				}).Build()
			r := &TrainJobReconciler{client: c}
			if err := r.patchStatus(context.Background(), tj, &tc.after); err != nil {
				t.Fatalf("patchStatus: %v", err)
			}
			var want []string
			if tc.wantPatch != "" {
				want = []string{tc.wantPatch}
			}
			if diff := cmp.Diff(want, patches); diff != "" {
				t.Errorf("status patches (-want,+got):\n%s", diff)
			}
			for _, p := range patches {
				if strings.Contains(p, `"status":{}`) {
					t.Errorf("patch %s empties the status", p)
				}
			}
		})
	}
}
