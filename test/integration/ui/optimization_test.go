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

package ui

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/test/util"
)

// An OptimizationJob as the controller leaves it half way (no controller runs here): its page
// lists the trials from the TrainJob informer, links each to its job page, marks the best and
// draws a scatter per parameter.
var _ = ginkgo.Describe("OptimizationJob pages", func() {
	ginkgo.It("list the search and show its trials, the best and the scatters", func() {
		ns := util.NewNamespace(ctx, k8sClient, "ui-hpo")
		oj := &trainer.OptimizationJob{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "search"},
			Spec: trainer.OptimizationJobSpec{
				Objectives:      []trainer.Objective{{Metric: "accuracy", Direction: trainer.ObjectiveDirectionMaximize}},
				SearchAlgorithm: &trainer.SearchAlgorithm{Grid: &trainer.GridAlgorithm{}},
				Parameters: []trainer.Parameter{{Name: "opt", SearchSpace: &trainer.SearchSpace{
					Categorical: &trainer.CategoricalSpace{Choices: []string{"adam", "sgd", "lion"}}}}},
				NumTrials: 3, ParallelTrials: 3,
				TrainJobTemplate: trainer.TrainJobTemplateSpec{Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}}},
			},
		}
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		for i, tr := range []struct{ opt, acc string }{{"adam", "0.81"}, {"sgd", "0.93"}, {"lion", ""}} {
			tj := trainJob(ns, optimization.TrialName("search", i), "torch")
			tj.Labels = map[string]string{optimization.JobNameLabel: "search", optimization.TrialIndexLabel: strconv.Itoa(i)}
			tj.Annotations = map[string]string{optimization.ParametersAnnotation: optimization.EncodeParameters(
				[]trainer.ParameterAssignment{{Name: "opt", Value: tr.opt}})}
			tj.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(oj, trainer.GroupVersion.WithKind(trainer.OptimizationJobKind))}
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
			if tr.acc == "" {
				continue
			}
			setStatus(tj, func(st *trainer.TrainJobStatus) {
				st.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue, Reason: "Done",
					Message: "done", LastTransitionTime: metav1.Now()}}
				st.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](100),
					Metrics: []trainer.Metric{{Name: "accuracy", Value: tr.acc}}, LastUpdatedTime: metav1.Now()}
			})
		}
		oj.Status = trainer.OptimizationJobStatus{
			Conditions: []metav1.Condition{{Type: optimization.ConditionRunning, Status: metav1.ConditionTrue,
				Reason: optimization.ReasonTrialsRunning, Message: "2 of 3 trials finished (0 failed), 1 running", LastTransitionTime: metav1.Now()}},
			Result: &trainer.OptimizationResult{TrainJobName: "search-1", Parameters: []trainer.ParameterAssignment{{Name: "opt", Value: "sgd"}}},
		}
		gomega.Expect(k8sClient.Status().Update(ctx, oj)).To(gomega.Succeed())

		ginkgo.By("the nav leads to the list, which shows the search with its trials and best")
		_, jobs := get("/jobs")
		gomega.Expect(jobs).To(gomega.ContainSubstring(`<a href="/optimizationjobs">Optimization</a>`))
		gomega.Eventually(func() string {
			_, body := get("/optimizationjobs?ns=" + ns)
			return regexp.MustCompile(`(?s)<tr data-optimizationjob="` + ns + `/search".*?</tr>`).FindString(body)
		}, 10*time.Second).Should(gomega.SatisfyAll(
			gomega.ContainSubstring("<td>2/3</td>"),
			gomega.ContainSubstring(`<td class="best-value">0.93</td>`),
			gomega.ContainSubstring("accuracy (Maximize)"),
		))

		ginkgo.By("the page: each trial linked to its TrainJob page, the best marked, a scatter of opt")
		code, page := get("/optimizationjobs/" + ns + "/search")
		gomega.Expect(code).To(gomega.Equal(http.StatusOK))
		gomega.Expect(page).To(gomega.SatisfyAll(
			gomega.MatchRegexp(`<tr data-trial="search-1" class="best"`),
			gomega.ContainSubstring(`<a href="/jobs/`+ns+`/search-0">search-0</a>`),
			gomega.ContainSubstring(`<td class="objective">0.81</td>`),
			gomega.ContainSubstring(`<figure class="chart scatter" data-parameter="opt" data-points="2">`),
			gomega.ContainSubstring(`<circle class="point best"`),
		))
		code, _ = get("/jobs/" + ns + "/search-1")
		gomega.Expect(code).To(gomega.Equal(http.StatusOK), "a trial's link opens its TrainJob page")

		ginkgo.By("a missing OptimizationJob is a 404")
		code, _ = get("/optimizationjobs/" + ns + "/nope")
		gomega.Expect(code).To(gomega.Equal(http.StatusNotFound))
	})
})
