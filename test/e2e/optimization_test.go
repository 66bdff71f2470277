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
	"math"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
)

// The simulated training run's knobs and loss curve (docs/local-cluster.md, "Progress"): the
// cluster's progress reporter reports loss = 2.5·exp(−rate·f) + 0.1 at fraction f of the run.
const simLossRateEnv = "GANTRY_SIM_LOSS_RATE"

func simFinalLoss(rate float64) string {
	return strconv.FormatFloat(2.5*math.Exp(-rate)+0.1, 'g', 6, 64)
}

var _ = ginkgo.Describe("OptimizationJob", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace("e2e-opt") })

	// The trials' pods run no code: the local cluster's progress reporter reports for them, as
	// training code would, through the status server with the pods' projected token, a loss
	// falling at the rate the trial's parameter sets in the env. The fastest decline ends lowest.
	ginkgo.It("runs its trials, which report through the status server, and picks the one with the lowest loss", func() {
		rates := []string{"0.5", "3", "1.5"}
		oj := &trainer.OptimizationJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "lr"},
			Spec: trainer.OptimizationJobSpec{
				Objectives:      []trainer.Objective{{Metric: "loss", Direction: trainer.ObjectiveDirectionMinimize}},
				SearchAlgorithm: &trainer.SearchAlgorithm{Grid: &trainer.GridAlgorithm{}},
				NumTrials:       3,
				ParallelTrials:  2,
				Parameters: []trainer.Parameter{{Name: "lr", SearchSpace: &trainer.SearchSpace{
					Categorical: &trainer.CategoricalSpace{Choices: rates},
				}}},
				TrainJobTemplate: trainer.TrainJobTemplateSpec{Spec: simulate(&trainer.TrainJob{Spec: trainer.TrainJobSpec{
					RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed", Kind: ptr.To(clusterRuntime)},
					Trainer: &trainer.Trainer{
						NumNodes: ptr.To[int32](1), ResourcesPerNode: gpus(1),
						Command: []string{"python", "train.py", "--lr=${trialParameters.lr}"},
						Env:     []corev1.EnvVar{{Name: simLossRateEnv, Value: "${trialParameters.lr}"}},
					},
				}}, map[string]map[string]string{"node": {simDuration: "4s"}}).Spec},
			},
		}
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())

		// Progress shows while a trial runs: a report lands before its pod ends.
		gomega.Eventually(func(g gomega.Gomega) {
			tj := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "lr-0"}, tj)).To(gomega.Succeed())
			g.Expect(tj.Status.TrainerStatus).NotTo(gomega.BeNil())
			g.Expect(tj.Status.TrainerStatus.ProgressPercentage).To(gomega.HaveValue(gomega.BeNumerically("<", 100)))
			g.Expect(tj.Status.TrainerStatus.EstimatedRemainingSeconds).To(gomega.HaveValue(gomega.BeNumerically(">", 0)))
		}).Should(gomega.Succeed())

		gomega.Eventually(func(g gomega.Gomega) {
			got := &trainer.OptimizationJob{}
			g.Expect(k8sClient.Get(ctx, keyOf(oj), got)).To(gomega.Succeed())
			g.Expect(meta.IsStatusConditionTrue(got.Status.Conditions, optimization.ConditionComplete)).To(gomega.BeTrue(), "%+v", got.Status.Conditions)
			g.Expect(got.Status.Result).To(gomega.Equal(&trainer.OptimizationResult{
				TrainJobName: "lr-1", Parameters: []trainer.ParameterAssignment{{Name: "lr", Value: "3"}},
			}))
		}).Should(gomega.Succeed())

		// Each trial keeps the end of its curve: 100%, no time left, the last loss of its rate.
		for i, rate := range rates {
			tj := getTrainJob(client.ObjectKey{Namespace: ns, Name: fmt.Sprintf("lr-%d", i)})
			r, err := strconv.ParseFloat(rate, 64)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(tj.Status.TrainerStatus).To(gomega.HaveField("ProgressPercentage", gomega.HaveValue(gomega.BeEquivalentTo(100))), tj.Name)
			gomega.Expect(tj.Status.TrainerStatus).To(gomega.HaveField("EstimatedRemainingSeconds", gomega.HaveValue(gomega.BeEquivalentTo(0))), tj.Name)
			gomega.Expect(tj.Status.TrainerStatus.Metrics).To(gomega.Equal([]trainer.Metric{{Name: "loss", Value: simFinalLoss(r)}}), tj.Name)
		}
	})
})
