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

// Package optimizationjob runs the OptimizationJob controller and webhook, with the TrainJob
// controller its trials need, in-process against envtest: trials, search order, results,
// failures, suspension and what admission refuses.
package optimizationjob

import (
	"context"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	"github.com/gantry-ml/gantry/internal/runtime/plugins"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/internal/webhook"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	env       = &fwk.Framework{Webhooks: true}
	k8sClient client.Client
	ctx       context.Context
)

func TestOptimizationJob(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "OptimizationJob suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	env.StartSuite(ctx)
	k8sClient = env.Client
	env.StartSuiteManager(ctx, func(m manager.Manager) error {
		rt, err := plugins.NewRuntime(framework.Options{})
		if err != nil {
			return err
		}
		if err := controller.SetupControllers(m, rt); err != nil {
			return err
		}
		return webhook.Setup(m, rt, clock.RealClock{})
	})
})

// newNamespace is a fresh namespace holding the TrainingRuntime "torch" the trials run on.
func newNamespace() string {
	ns := util.NewNamespace(ctx, k8sClient, "opt")
	rt := utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Spec(
		utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()).Obj()
	gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
	return ns
}

// search is an OptimizationJob whose trials run "train --<param>=${trialParameters.<param>}"
// for each parameter name given, on the namespace's runtime.
func search(ns, name string, params ...string) *utiltesting.OptimizationJobWrapper {
	command := []string{"train"}
	for _, p := range params {
		command = append(command, "--"+p+"=${trialParameters."+p+"}")
	}
	return utiltesting.MakeOptimizationJobWrapper(ns, name).TemplateRuntimeRef(trainer.TrainingRuntimeKind, "torch").
		Trainer(utiltesting.MakeTrainerWrapper().Container("pytorch:2", command, nil).Obj())
}

// trials are the OptimizationJob's trials, by index.
func trials(g gomega.Gomega, oj *trainer.OptimizationJob) map[string]*trainer.TrainJob {
	list := &trainer.TrainJobList{}
	g.Expect(k8sClient.List(ctx, list, client.InNamespace(oj.Namespace),
		client.MatchingLabels{optimization.JobNameLabel: oj.Name})).To(gomega.Succeed())
	out := map[string]*trainer.TrainJob{}
	for i := range list.Items {
		out[list.Items[i].Labels[optimization.TrialIndexLabel]] = &list.Items[i]
	}
	return out
}

// unfinished counts trials without a Complete or Failed condition.
func unfinished(ts map[string]*trainer.TrainJob) int {
	n := 0
	for _, tj := range ts {
		if !apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete) &&
			!apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobFailed) {
			n++
		}
	}
	return n
}

// finishTrial reports loss for the trial as the status server would (when loss is not empty),
// then ends its JobSet as the JobSet controller would: Completed, or Failed when failed.
func finishTrial(tj *trainer.TrainJob, loss string, failed bool) {
	key := client.ObjectKeyFromObject(tj)
	if loss != "" {
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, key, cur)).To(gomega.Succeed())
			cur.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{LastUpdatedTime: metav1.Now(),
				Metrics: []trainer.Metric{{Name: "loss", Value: loss}}}
			g.Expect(k8sClient.Status().Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	}
	cond := metav1.Condition{Type: "Completed", Status: metav1.ConditionTrue, Reason: "AllJobsCompleted", Message: "jobset completed successfully"}
	if failed {
		cond = metav1.Condition{Type: "Failed", Status: metav1.ConditionTrue, Reason: "FailedJobs", Message: "jobset failed"}
	}
	gomega.Eventually(func(g gomega.Gomega) {
		js := &jobsetv1alpha2.JobSet{}
		g.Expect(k8sClient.Get(ctx, key, js)).To(gomega.Succeed())
		apimeta.SetStatusCondition(&js.Status.Conditions, cond)
		g.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
	want := trainer.TrainJobComplete
	if failed {
		want = trainer.TrainJobFailed
	}
	gomega.Eventually(func(g gomega.Gomega) {
		cur := &trainer.TrainJob{}
		g.Expect(k8sClient.Get(ctx, key, cur)).To(gomega.Succeed())
		g.Expect(apimeta.IsStatusConditionTrue(cur.Status.Conditions, want)).To(gomega.BeTrue())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
}

// condition is the OptimizationJob's condition of type t, nil when missing.
func condition(g gomega.Gomega, oj *trainer.OptimizationJob, t string) *metav1.Condition {
	cur := &trainer.OptimizationJob{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(oj), cur)).To(gomega.Succeed())
	return apimeta.FindStatusCondition(cur.Status.Conditions, t)
}
