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

package testkit_test

import (
	"context"
	"fmt"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/pkg/testkit"
)

// A suite starts envtest with Gantry's CRDs and webhooks, runs Gantry in-process, submits a
// TrainJob against a shipped runtime and plays the JobSet controller to finish it.
func Example() {
	ctx := context.Background()
	env, err := testkit.Environment()
	if err != nil {
		panic(err)
	}
	if _, err := env.Start(); err != nil { // kube-apiserver and etcd from KUBEBUILDER_ASSETS
		panic(err)
	}
	defer func() { _ = env.Stop() }()
	gantry, err := testkit.Start(ctx, env, testkit.Options{Runtimes: []string{"torch-distributed"}})
	if err != nil {
		panic(err)
	}
	defer func() { _ = gantry.Stop() }()

	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "mnist"},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To[int32](2)},
		},
	}
	if err := gantry.Client.Create(ctx, tj); err != nil { // through Gantry's webhooks
		panic(err)
	}
	key := types.NamespacedName{Namespace: "default", Name: "mnist"}
	if _, err := gantry.CompleteTrainJob(ctx, key); err != nil {
		panic(err)
	}
	done, err := gantry.WaitForTrainJob(ctx, key, trainer.TrainJobComplete)
	if err != nil {
		panic(err)
	}
	fmt.Println(apimeta.FindStatusCondition(done.Status.Conditions, trainer.TrainJobComplete).Reason) // AllJobsCompleted
}

// A failure carries its reason and message from the JobSet to the TrainJob.
func ExampleGantry_FailTrainJob() {
	ctx := context.Background()
	var gantry *testkit.Gantry // started as in the package example
	key := types.NamespacedName{Namespace: "default", Name: "mnist"}
	if _, err := gantry.FailTrainJob(ctx, key, "FailedJobs", "node-0 exited with 42"); err != nil {
		panic(err)
	}
	failed, err := gantry.WaitForTrainJob(ctx, key, trainer.TrainJobFailed)
	if err != nil {
		panic(err)
	}
	fmt.Println(apimeta.FindStatusCondition(failed.Status.Conditions, trainer.TrainJobFailed).Message)
}
