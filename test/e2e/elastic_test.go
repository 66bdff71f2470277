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

package e2e

import (
	"fmt"
	"sort"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/knobs"
)

// setTarget sets elastic.gantry.dev/target-nodes and returns the write's error.
func setTarget(key client.ObjectKey, n int) error {
	tj := getTrainJob(key)
	patch := client.MergeFrom(tj.DeepCopy())
	tj.Annotations[knobs.ElasticTargetNodes] = fmt.Sprint(n)
	return k8sClient.Patch(ctx, tj, patch)
}

// nodeJobSize is the node Job's parallelism and completions, and the completion indices of its
// running pods.
func nodeJobSize(g gomega.Gomega, ns, name string) (int32, int32, []string) {
	job := &batchv1.Job{}
	g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name + "-node-0"}, job)).To(gomega.Succeed())
	var indices []string
	for _, p := range podsOf(ns, name) {
		if active(&p) && p.DeletionTimestamp == nil && p.Labels[jobsetv1alpha2.ReplicatedJobNameKey] == "node" {
			indices = append(indices, p.Annotations[completionIdx])
		}
	}
	sort.Strings(indices)
	return ptr.Deref(job.Spec.Parallelism, 0), ptr.Deref(job.Spec.Completions, 0), indices
}

var _ = ginkgo.Describe("Elastic torch", func() {
	ginkgo.It("follows target-nodes 4 -> 2 -> 4 in the running JobSet, and refuses what it cannot do", func() {
		ns := newNamespace("elastic")
		tj := simulate(trainJob(ns, "elastic", clusterRuntime, "torch-distributed", 4, 1),
			map[string]map[string]string{"node": {simDuration: "10m"}})
		tj.Annotations = map[string]string{knobs.ElasticMinNodes: "1", knobs.ElasticMaxNodes: "4"}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		key := keyOf(tj)
		var uid types.UID
		gomega.Eventually(func(g gomega.Gomega) {
			par, _, indices := nodeJobSize(g, ns, tj.Name)
			g.Expect(par).To(gomega.Equal(int32(4)))
			g.Expect(indices).To(gomega.Equal([]string{"0", "1", "2", "3"}))
			uid = jobSetOf(key).UID
		}).Should(gomega.Succeed())

		for _, step := range []struct {
			nodes   int
			indices []string
		}{{2, []string{"0", "1"}}, {4, []string{"0", "1", "2", "3"}}} {
			gomega.Expect(setTarget(key, step.nodes)).To(gomega.Succeed())
			asked := time.Now()
			gomega.Eventually(func(g gomega.Gomega) {
				par, comp, _ := nodeJobSize(g, ns, tj.Name)
				g.Expect([]int32{par, comp}).To(gomega.Equal([]int32{int32(step.nodes), int32(step.nodes)}))
			}, 10*time.Second, 50*time.Millisecond).Should(gomega.Succeed())
			followed := time.Since(asked)
			ginkgo.GinkgoWriter.Printf("elastic: the node Job followed target-nodes %d in %s\n", step.nodes, followed.Round(time.Millisecond))
			gomega.Expect(followed).To(gomega.BeNumerically("<", 2*time.Second))
			gomega.Eventually(func(g gomega.Gomega) {
				_, _, indices := nodeJobSize(g, ns, tj.Name)
				g.Expect(indices).To(gomega.Equal(step.indices))
			}).Should(gomega.Succeed())
			gomega.Expect(jobSetOf(key).UID).To(gomega.Equal(uid), "the JobSet was made again")
			c := meta.FindStatusCondition(getTrainJob(key).Status.Conditions, controller.ConditionScaled)
			gomega.Expect(c).NotTo(gomega.BeNil())
			gomega.Expect(c.Reason).To(gomega.Equal(controller.ReasonScaled))
		}

		err := setTarget(key, 5)
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "%v", err)
		gomega.Expect(err.Error()).To(gomega.ContainSubstring(`metadata.annotations[elastic.gantry.dev/target-nodes]: Invalid value: "5": must be from elastic.gantry.dev/min-nodes (1) to elastic.gantry.dev/max-nodes (4)`))
	})

	ginkgo.It("refuses to scale a TrainJob that has completed, with a condition and its reason", func() {
		ns := newNamespace("elastic-done")
		tj := simulate(trainJob(ns, "done", clusterRuntime, "torch-distributed", 2, 1),
			map[string]map[string]string{"node": {simDuration: "1s"}})
		tj.Annotations = map[string]string{knobs.ElasticMinNodes: "1", knobs.ElasticMaxNodes: "4"}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		gomega.Expect(setTarget(keyOf(tj), 1)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			got := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, keyOf(tj), got)).To(gomega.Succeed())
			c := meta.FindStatusCondition(got.Status.Conditions, controller.ConditionScaled)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect([]string{string(c.Status), c.Reason}).To(gomega.Equal([]string{"False", controller.ReasonScaleJobSetDone}))
		}).Should(gomega.Succeed())
		for _, rj := range jobSetOf(keyOf(tj)).Spec.ReplicatedJobs {
			if rj.Name == "node" {
				gomega.Expect(rj.Template.Spec.Parallelism).To(gomega.HaveValue(gomega.Equal(int32(2))), "a finished JobSet was scaled")
			}
		}
	})
})
