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

package cli

import (
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/test/util"
)

// hpoNS holds the OptimizationJob the golden files and docs/cli.md show, apart from goldenNS so
// that its trials do not change the TrainJob goldens.
const hpoNS = "team-hpo"

// optimizationFixture creates lr-search, half way through its six trials as the controller
// would leave it (no controller runs here), and returns the clock that makes it two hours old.
func optimizationFixture() time.Time {
	gomega.Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: hpoNS}})).To(gomega.Succeed())
	oj := &trainer.OptimizationJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: hpoNS, Name: "lr-search"},
		Spec: trainer.OptimizationJobSpec{
			Objectives:      []trainer.Objective{{Metric: "loss", Direction: trainer.ObjectiveDirectionMinimize}},
			SearchAlgorithm: &trainer.SearchAlgorithm{Random: &trainer.RandomAlgorithm{Seed: ptr.To[int64](42)}},
			Parameters: []trainer.Parameter{
				{Name: "lr", SearchSpace: &trainer.SearchSpace{LogUniform: &trainer.LogUniformSpace{Min: "0.0001", Max: "0.1"}}},
				{Name: "batch", SearchSpace: &trainer.SearchSpace{Categorical: &trainer.CategoricalSpace{Choices: []string{"32", "64"}}}},
			},
			NumTrials: 6, ParallelTrials: 2,
			TrainJobTemplate: trainer.TrainJobTemplateSpec{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch-cli"}}},
		},
	}
	gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
	clock := oj.CreationTimestamp.Add(2 * time.Hour)
	trials := []struct {
		lr, batch, loss string
		cond            string
	}{
		{"0.0006", "64", "0.31", trainer.TrainJobComplete},
		{"0.029", "32", "0.12", trainer.TrainJobComplete},
		{"0.0023", "64", "", trainer.TrainJobFailed},
		{"0.011", "32", "0.2", ""},
	}
	for i, tr := range trials {
		tj := fixtureJob{name: optimization.TrialName(oj.Name, i), runtime: "torch-cli", labels: map[string]string{
			optimization.JobNameLabel: oj.Name, optimization.TrialIndexLabel: strconv.Itoa(i)}}.object(hpoNS)
		tj.Annotations = map[string]string{optimization.ParametersAnnotation: optimization.EncodeParameters(
			[]trainer.ParameterAssignment{{Name: "lr", Value: tr.lr}, {Name: "batch", Value: tr.batch}})}
		tj.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		var status trainer.TrainJobStatus
		if tr.loss != "" {
			status.TrainerStatus = &trainer.TrainJobTrainerStatus{Metrics: []trainer.Metric{{Name: "loss", Value: tr.loss}},
				LastUpdatedTime: metav1.NewTime(clock.Add(-time.Hour))}
		}
		if tr.cond != "" {
			status.Conditions = []metav1.Condition{condition(tr.cond, "Done", "jobset ended", clock.Add(-time.Hour))}
		} else {
			status.JobsStatus = []trainer.JobStatus{jobStatus("node", 1, 1, 0, 0)}
		}
		setStatus(tj, status)
	}
	at := clock.Add(-110 * time.Minute)
	oj.Status = trainer.OptimizationJobStatus{
		Conditions: []metav1.Condition{
			condition(optimization.ConditionCreated, optimization.ReasonCreated, "OptimizationJob is created", at),
			condition(optimization.ConditionRunning, optimization.ReasonTrialsRunning, "3 of 6 trials finished (1 failed), 1 running", at),
		},
		Result: &trainer.OptimizationResult{TrainJobName: "lr-search-1",
			Parameters: []trainer.ParameterAssignment{{Name: "lr", Value: "0.029"}, {Name: "batch", Value: "32"}}},
	}
	gomega.Expect(k8sClient.Status().Update(ctx, oj)).To(gomega.Succeed())
	return clock
}

var _ = ginkgo.Describe("OptimizationJobs", ginkgo.Ordered, func() {
	var clock time.Time
	at := func(o *cli.Options) { o.Now = func() time.Time { return clock } }
	ginkgo.BeforeAll(func() { clock = optimizationFixture() })

	ginkgo.DescribeTable("prints", func(golden string, args ...string) {
		r := gantryWith(ctx, nil, at, args...)
		gomega.Expect(r.Stderr).To(gomega.BeEmpty())
		gomega.Expect(r.Code).To(gomega.Equal(0))
		expectGolden(golden, r.Stdout)
	},
		ginkgo.Entry("list optimizationjobs", "list-optimizationjobs", "list", "optimizationjobs", "-n", hpoNS),
		ginkgo.Entry("get optimizationjob/NAME", "get-optimizationjob", "get", "optimizationjob/lr-search", "-n", hpoNS),
		ginkgo.Entry("get oj/NAME -o json", "get-optimizationjob-json", "get", "oj/lr-search", "-n", hpoNS, "-o", "json"),
	)

	ginkgo.It("submits from a file: the API server admits it, the hints name it", func() {
		ns := util.NewNamespace(ctx, k8sClient, "cli")
		file := writeTemp("search.yaml", `apiVersion: trainer.kubeflow.org/v1alpha1
kind: OptimizationJob
metadata: {name: submitted}
spec:
  objectives: [{metric: loss}]
  parameters: [{name: lr, searchSpace: {uniform: {min: "0.1", max: "1"}}}]
  trainJobTemplate: {spec: {runtimeRef: {name: torch-cli}}}
`)
		r := gantry("optimize", "-f", file, "-n", ns)
		gomega.Expect(r).To(gomega.Equal(result{Stdout: "optimizationjob.trainer.kubeflow.org/submitted created\n",
			Stderr: "Follow it with: gantry get optimizationjob/submitted -n " + ns + "\nIts trials: gantry list -n " + ns +
				" -l optimization.gantry.dev/job-name=submitted\n"}))
		got := &trainer.OptimizationJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "submitted"}, got)).To(gomega.Succeed())
		gomega.Expect(got.Spec.NumTrials).To(gomega.Equal(int32(1)), "the schema's default")
	})

	ginkgo.It("refuses a misspelt field by name: 2", func() {
		file := writeTemp("typo.yaml", "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: OptimizationJob\nmetadata: {name: typo}\n"+
			"spec: {objectives: [{metric: loss}], numTrail: 3, parameters: [{name: lr, searchSpace: {categorical: {choices: [a]}}}], trainJobTemplate: {spec: {runtimeRef: {name: x}}}}\n")
		r := gantry("optimize", "-f", file, "-n", hpoNS)
		gomega.Expect(r.Code).To(gomega.Equal(cli.ExitUsage))
		gomega.Expect(r.Stderr).To(gomega.ContainSubstring(`unknown field "spec.numTrail"`))
	})
})

// writeTemp writes a file in a directory of the spec and returns its path.
func writeTemp(name, data string) string {
	ginkgo.GinkgoHelper()
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), name)
	gomega.Expect(os.WriteFile(path, []byte(data), 0o600)).To(gomega.Succeed())
	return path
}
