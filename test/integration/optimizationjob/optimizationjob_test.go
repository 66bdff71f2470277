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

package optimizationjob

import (
	"fmt"
	"slices"
	"strconv"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/optimization"
	"github.com/gantry-ml/gantry/test/util"
)

func values(nv ...string) []trainer.ParameterAssignment {
	var out []trainer.ParameterAssignment
	for i := 0; i < len(nv); i += 2 {
		out = append(out, trainer.ParameterAssignment{Name: nv[i], Value: nv[i+1]})
	}
	return out
}

func parametersOf(g gomega.Gomega, tj *trainer.TrainJob) []trainer.ParameterAssignment {
	v, err := optimization.DecodeParameters(tj.Annotations[optimization.ParametersAnnotation])
	g.Expect(err).NotTo(gomega.HaveOccurred())
	return v
}

var _ = ginkgo.Describe("OptimizationJob", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.It("runs parallelTrials at a time, numTrials in all, and writes the best trial", func() {
		oj := search(ns, "lr", "lr").Trials(5, 2).Seed(7).Uniform("lr", "0", "1", trainer.ParameterTypeFloat).Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		losses := map[string]float64{}
		for finished := range 5 {
			var next *trainer.TrainJob
			gomega.Eventually(func(g gomega.Gomega) {
				ts := trials(g, oj)
				g.Expect(ts).To(gomega.HaveLen(min(2+finished, 5)))
				g.Expect(unfinished(ts)).To(gomega.Equal(min(2, 5-finished)))
				next = ts[strconv.Itoa(finished)]
				g.Expect(next).NotTo(gomega.BeNil())
			}, util.Timeout, util.Interval).Should(gomega.Succeed())
			lr, err := strconv.ParseFloat(parametersOf(gomega.Default, next)[0].Value, 64)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			gomega.Expect(next.Spec.Trainer.Command).To(gomega.Equal([]string{"train", "--lr=" + parametersOf(gomega.Default, next)[0].Value}))
			losses[next.Name] = (lr - 0.3) * (lr - 0.3) // the best lr is the one nearest 0.3
			finishTrial(next, strconv.FormatFloat(losses[next.Name], 'g', -1, 64), false)
		}
		best := ""
		for name, loss := range losses {
			if best == "" || loss < losses[best] {
				best = name
			}
		}
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.OptimizationJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(oj), cur)).To(gomega.Succeed())
			g.Expect(cur.Status.Result).NotTo(gomega.BeNil())
			g.Expect(cur.Status.Result.TrainJobName).To(gomega.Equal(best))
			c := condition(g, oj, optimization.ConditionComplete)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Reason).To(gomega.Equal(optimization.ReasonBestTrialFound))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			ts := trials(g, oj)
			g.Expect(ts).To(gomega.HaveLen(5))
			best := ts[fmt.Sprint(slices.Index([]string{"lr-0", "lr-1", "lr-2", "lr-3", "lr-4"}, best))]
			cur := &trainer.OptimizationJob{}
			g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(oj), cur)).To(gomega.Succeed())
			g.Expect(cur.Status.Result.Parameters).To(gomega.Equal(parametersOf(g, best)))
			for _, tj := range ts {
				ref := metav1.GetControllerOf(tj)
				g.Expect(ref).NotTo(gomega.BeNil())
				g.Expect(ref.UID).To(gomega.Equal(cur.UID))
				g.Expect(ref.BlockOwnerDeletion).To(gomega.Equal(ptr.To(true)))
			}
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("enumerates a 100-trial grid in the documented order", func() {
		a, b, c := []string{"a0", "a1", "a2", "a3"}, []string{"b0", "b1", "b2", "b3", "b4"}, []string{"c0", "c1", "c2", "c3", "c4"}
		oj := search(ns, "grid", "a", "b", "c").Trials(100, 100).Grid().
			Categorical("a", a...).Categorical("b", b...).Categorical("c", c...).Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			ts := trials(g, oj)
			g.Expect(ts).To(gomega.HaveLen(100))
			for i := range 100 {
				// The last parameter varies fastest.
				want := values("a", a[i/25], "b", b[(i/5)%5], "c", c[i%5])
				tj := ts[strconv.Itoa(i)]
				g.Expect(tj.Name).To(gomega.Equal(fmt.Sprintf("grid-%d", i)))
				g.Expect(parametersOf(g, tj)).To(gomega.Equal(want), "trial %d", i)
				g.Expect(tj.Spec.Trainer.Command).To(gomega.Equal([]string{"train", "--a=" + a[i/25], "--b=" + b[(i/5)%5], "--c=" + c[i%5]}))
			}
		}, 3*util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("draws a seeded random search's values reproducibly", func() {
		oj := search(ns, "seeded", "lr", "layers", "opt").Trials(3, 3).Seed(42).
			LogUniform("lr", "0.0001", "0.1", trainer.ParameterTypeFloat).
			Uniform("layers", "1", "8", trainer.ParameterTypeInt).
			Categorical("opt", "adam", "sgd", "lion").Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		// The same values as internal/optimization's TestAssignRandom: docs/optimization.md.
		want := map[string][]trainer.ParameterAssignment{
			"0": values("lr", "0.0005755088418822442", "layers", "5", "opt", "adam"),
			"1": values("lr", "0.02881393120043753", "layers", "1", "opt", "sgd"),
			"2": values("lr", "0.00227499203835134", "layers", "3", "opt", "adam"),
		}
		gomega.Eventually(func(g gomega.Gomega) {
			ts := trials(g, oj)
			g.Expect(ts).To(gomega.HaveLen(3))
			for i, w := range want {
				g.Expect(parametersOf(g, ts[i])).To(gomega.Equal(w), "trial %s", i)
				g.Expect(ts[i].Spec.Trainer.Command).To(gomega.Equal([]string{"train",
					"--lr=" + w[0].Value, "--layers=" + w[1].Value, "--opt=" + w[2].Value}))
			}
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("fails once more trials failed than max-failed-trials allows, and suspends the rest", func() {
		oj := search(ns, "failing", "opt").Trials(4, 3).Categorical("opt", "a", "b").
			Annotation(knobs.OptimizationMaxFailedTrials, "1").Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		var ts map[string]*trainer.TrainJob
		gomega.Eventually(func(g gomega.Gomega) {
			ts = trials(g, oj)
			g.Expect(ts).To(gomega.HaveLen(3))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		// One failure is allowed: its slot goes to the last trial.
		finishTrial(ts["0"], "", true)
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(trials(g, oj)).To(gomega.HaveLen(4))
			g.Expect(condition(g, oj, optimization.ConditionFailed)).To(gomega.BeNil())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		finishTrial(ts["1"], "", true)
		gomega.Eventually(func(g gomega.Gomega) {
			c := condition(g, oj, optimization.ConditionFailed)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Reason).To(gomega.Equal(optimization.ReasonTooManyFailedTrials))
			g.Expect(c.Message).To(gomega.Equal("2 trials failed, more than the 1 allowed (optimization.gantry.dev/max-failed-trials)"))
			cur := trials(g, oj)
			g.Expect(cur["2"].Spec.Suspend).To(gomega.Equal(ptr.To(true)))
			g.Expect(cur["3"].Spec.Suspend).To(gomega.Equal(ptr.To(true)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			events := &corev1.EventList{}
			g.Expect(k8sClient.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
			var reasons []string
			for _, e := range events.Items {
				if e.InvolvedObject.Name == oj.Name {
					reasons = append(reasons, e.Reason)
				}
			}
			g.Expect(reasons).To(gomega.ContainElements(optimization.EventTrialCreated, optimization.EventTrialFailed, optimization.EventFailed))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("suspends its unfinished trials and creates none while suspended, then resumes them", func() {
		oj := search(ns, "pausing", "opt").Trials(4, 2).Categorical("opt", "a", "b").Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(trials(g, oj)).To(gomega.HaveLen(2))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		setAnnotation(oj, knobs.OptimizationSuspend, "true")
		var ts map[string]*trainer.TrainJob
		gomega.Eventually(func(g gomega.Gomega) {
			c := condition(g, oj, optimization.ConditionRunning)
			g.Expect(c).NotTo(gomega.BeNil())
			g.Expect(c.Reason).To(gomega.Equal(optimization.ReasonSuspended))
			ts = trials(g, oj)
			for _, tj := range ts {
				g.Expect(tj.Spec.Suspend).To(gomega.Equal(ptr.To(true)), tj.Name)
			}
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		// A trial that ends while suspended frees its slot, but nothing new starts.
		finishTrial(ts["0"], "0.5", false)
		gomega.Eventually(func(g gomega.Gomega) {
			c := condition(g, oj, optimization.ConditionRunning)
			g.Expect(c.Message).To(gomega.HavePrefix("1 of 4 trials finished"))
			g.Expect(trials(g, oj)).To(gomega.HaveLen(2))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		setAnnotation(oj, knobs.OptimizationSuspend, "false")
		gomega.Eventually(func(g gomega.Gomega) {
			ts := trials(g, oj)
			g.Expect(ts).To(gomega.HaveLen(3))
			g.Expect(ts["1"].Spec.Suspend).To(gomega.Equal(ptr.To(false)))
			g.Expect(ts["1"].Annotations).NotTo(gomega.HaveKey(optimization.SuspendedByAnnotation))
			c := condition(g, oj, optimization.ConditionRunning)
			g.Expect(c.Reason).To(gomega.Equal(optimization.ReasonTrialsRunning))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})
})

func setAnnotation(oj *trainer.OptimizationJob, key, value string) {
	gomega.Eventually(func(g gomega.Gomega) {
		cur := &trainer.OptimizationJob{}
		g.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(oj), cur)).To(gomega.Succeed())
		if cur.Annotations == nil {
			cur.Annotations = map[string]string{}
		}
		cur.Annotations[key] = value
		g.Expect(k8sClient.Update(ctx, cur)).To(gomega.Succeed())
	}, util.Timeout, util.Interval).Should(gomega.Succeed())
}

var _ = ginkgo.Describe("OptimizationJob admission", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace() })

	ginkgo.DescribeTable("refuses, naming the field",
		func(build func() *trainer.OptimizationJob, want string) {
			oj := build()
			oj.Namespace = ns
			err := k8sClient.Create(ctx, oj)
			gomega.Expect(err).To(gomega.HaveOccurred())
			gomega.Expect(err.Error()).To(gomega.ContainSubstring(want))
		},
		ginkgo.Entry("a parameter the template names but spec.parameters lacks",
			func() *trainer.OptimizationJob {
				return search("", "bad", "lr").Categorical("rate", "1").Obj()
			}, `spec.trainJobTemplate.spec.trainer.command[1]: Invalid value: "${trialParameters.lr}": names no parameter of spec.parameters (rate)`),
		ginkgo.Entry("a grid larger than numTrials",
			func() *trainer.OptimizationJob {
				return search("", "bad").Trials(3, 1).Grid().Categorical("a", "1", "2").Categorical("b", "1", "2").Obj()
			}, "spec.numTrials: Invalid value: 3: grid search over 4 combinations of the categorical choices needs numTrials of at least that"),
		ginkgo.Entry("parallelTrials above numTrials (the schema)",
			func() *trainer.OptimizationJob {
				return search("", "bad").Trials(2, 3).Categorical("a", "1").Obj()
			}, "parallelTrials cannot exceed numTrials"),
		ginkgo.Entry("grid over a uniform parameter (the schema)",
			func() *trainer.OptimizationJob {
				return search("", "bad").Trials(3, 1).Grid().Uniform("a", "0", "1", "").Obj()
			}, "Grid search requires all parameters to be Categorical"),
	)

	ginkgo.It("keeps the spec immutable and checks the knobs on update", func() {
		oj := search(ns, "fixed", "opt").Trials(2, 1).Categorical("opt", "a", "b").Obj()
		gomega.Expect(k8sClient.Create(ctx, oj)).To(gomega.Succeed())
		cur := &trainer.OptimizationJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(oj), cur)).To(gomega.Succeed())
		// Patches, not updates: the controller writes the job meanwhile, and an update of a stale
		// copy would be refused for its resourceVersion before any rule is asked.
		changed := cur.DeepCopy()
		changed.Spec.NumTrials = 1
		err := k8sClient.Patch(ctx, changed, client.MergeFrom(cur))
		gomega.Expect(apierrors.IsInvalid(err)).To(gomega.BeTrue(), "%v", err)
		gomega.Expect(err.Error()).To(gomega.ContainSubstring("OptimizationJobSpec is immutable and cannot be updated after creation"))
		bad := cur.DeepCopy()
		bad.Annotations = map[string]string{knobs.OptimizationSuspend: "yes"}
		err = k8sClient.Patch(ctx, bad, client.MergeFrom(cur))
		gomega.Expect(err).To(gomega.HaveOccurred())
		gomega.Expect(err.Error()).To(gomega.ContainSubstring(`metadata.annotations[optimization.gantry.dev/suspend]: Unsupported value: "yes"`))
	})
})
