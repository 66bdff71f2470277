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
	"context"
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// TestSpamEndsCleanlyWhenTheLimiterSeesTheDeadline: client-go's rate limiter refuses a wait that
// would pass the context's deadline before the context is done. The last report of the window
// must not turn that into the run's error (CI's bench-smoke failed so at report 20).
func TestSpamEndsCleanlyWhenTheLimiterSeesTheDeadline(t *testing.T) {
	const interval = 10 * time.Millisecond
	sch := runtime.NewScheme()
	if err := trainer.AddToScheme(sch); err != nil {
		t.Fatal(err)
	}
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Name: "spammer", Namespace: "bench"}}
	c := fake.NewClientBuilder().WithScheme(sch).WithObjects(tj).WithStatusSubresource(tj).
		WithInterceptorFuncs(interceptor.Funcs{
			SubResourcePatch: func(ctx context.Context, c client.Client, sub string, obj client.Object, p client.Patch, opts ...client.SubResourcePatchOption) error {
				// The limiter's answer when its wait (here 3 intervals) would pass the deadline.
				if d, ok := ctx.Deadline(); ok && time.Until(d) < 3*interval {
					return errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
				}
				return c.SubResource(sub).Patch(ctx, obj, p, opts...)
			},
		}).Build()
	ctx, cancel := context.WithTimeout(context.Background(), 20*interval)
	defer cancel()
	n, err := spam(ctx, c, tj, options{interval: interval, names: 2})
	if err != nil {
		t.Fatalf("spam ended with %v after %d reports, want a clean end of the window", err, n)
	}
	if n < 5 {
		t.Errorf("%d reports in 20 intervals, want at least 5", n)
	}
}
