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

package multikueue

import (
	"os/exec"
	"regexp"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
	"github.com/gantry-ml/gantry/test/localcluster"
)

var _ = ginkgo.Describe("Managing a dispatched TrainJob from the manager", func() {
	ginkgo.It("stops, resumes and deletes the worker's copy with the manager's TrainJob", func() {
		ns := newNamespace("manage")
		gpuQueues(ns)
		tj := trainJob(ns, "long", 1, 8, "10m")
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		w, _ := expectDispatched(key)
		expectRunningOn(w, key, 1)

		ginkgo.By("stopping its Workload on the manager")
		setWorkloadActive(tj, false)
		for _, m := range workers {
			expectNothingOn(m, key)
		}
		gomega.Eventually(func(g gomega.Gomega) {
			here := &trainer.TrainJob{}
			g.Expect(manager.Get(ctx, key, here)).To(gomega.Succeed())
			g.Expect(here.Spec.Suspend).To(gomega.HaveValue(gomega.BeTrue()), "Kueue suspends the manager's TrainJob")
			g.Expect(meta.IsStatusConditionTrue(here.Status.Conditions, trainer.TrainJobSuspended)).To(gomega.BeTrue(),
				"the worker Gantry's Suspended condition, copied before Kueue deleted the copy: %v", here.Status.Conditions)
		}).Should(gomega.Succeed())

		ginkgo.By("resuming it")
		setWorkloadActive(tj, true)
		var again *member
		gomega.Eventually(func(g gomega.Gomega) {
			for _, m := range workers {
				if len(runningPods(g, m, key)) == 1 {
					again = m
				}
			}
			g.Expect(again).NotTo(gomega.BeNil(), "a running pod of %s on a worker", key)
		}).Should(gomega.Succeed())
		chosen, _ := expectDispatched(key)
		gomega.Expect(chosen.name).To(gomega.Equal(again.name))
		expectRunningOn(again, key, 1)
		gomega.Eventually(func(g gomega.Gomega) {
			here := &trainer.TrainJob{}
			g.Expect(manager.Get(ctx, key, here)).To(gomega.Succeed())
			g.Expect(here.Spec.Suspend).To(gomega.HaveValue(gomega.BeFalse()))
			g.Expect(meta.IsStatusConditionFalse(here.Status.Conditions, trainer.TrainJobSuspended)).To(gomega.BeTrue(), "%v", here.Status.Conditions)
		}).Should(gomega.Succeed())

		ginkgo.By("deleting it on the manager")
		gomega.Expect(manager.Delete(ctx, tj)).To(gomega.Succeed())
		for _, m := range workers {
			expectNothingOn(m, key)
		}
		gomega.Eventually(func() bool { return apierrors.IsNotFound(manager.Get(ctx, key, &trainer.TrainJob{})) }).Should(gomega.BeTrue())
	})

	ginkgo.It("keeps a TrainJob Queued on the manager while both workers are full, and gantry get says why", func() {
		ns := newNamespace("full")
		gpuQueues(ns)
		var fillers []*trainer.TrainJob
		used := map[string]bool{}
		for _, name := range []string{"fill-1", "fill-2"} {
			f := trainJob(ns, name, 2, 8, "10m")
			gomega.Expect(manager.Create(ctx, f)).To(gomega.Succeed())
			w, _ := expectDispatched(client.ObjectKeyFromObject(f))
			expectRunningOn(w, client.ObjectKeyFromObject(f), 2)
			used[w.name] = true
			fillers = append(fillers, f)
		}
		gomega.Expect(used).To(gomega.HaveLen(2), "each filler takes a whole worker")

		tj := trainJob(ns, "waiting", 1, 8, "5s")
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		var why string
		gomega.Eventually(func(g gomega.Gomega) {
			wl := workloadOf(g, manager, tj)
			g.Expect(condition(wl, "QuotaReserved")).To(gomega.HaveKeyWithValue("status", "True"), "the manager's own quota is ample")
			g.Expect(condition(wl, "Admitted")).NotTo(gomega.HaveKeyWithValue("status", "True"))
			checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
			g.Expect(checks).To(gomega.ContainElement(gomega.HaveKeyWithValue("state", "Pending")))
			// What Gantry's tools say of it: the check that holds it, with Kueue's message.
			why = trainjob.WorkloadFrom(wl).Message
			g.Expect(why).To(gomega.ContainSubstring("waiting for admission check " + localcluster.MultiKueueAdmissionCheck))
		}).Should(gomega.Succeed())
		gomega.Consistently(func(g gomega.Gomega) {
			for _, m := range workers {
				g.Expect(copyOn(g, m, key)).To(gomega.BeNil(), "a copy on %s, which is full", m.name)
			}
		}, 5*time.Second).Should(gomega.Succeed())

		out, err := exec.Command(gantryBin, "get", tj.Name, "-n", ns, "--kubeconfig", manager.lc.Kubeconfig()).CombinedOutput()
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "gantry get: %s", out)
		ginkgo.GinkgoWriter.Printf("gantry get %s on the manager:\n%s\n", tj.Name, out)
		gomega.Expect(string(out)).To(gomega.MatchRegexp(`(?m)^State:\s+Queued$`))
		gomega.Expect(string(out)).To(gomega.MatchRegexp(`(?m)^Message:\s+` + regexp.QuoteMeta(why) + `$`))

		ginkgo.By("freeing a worker")
		freed, _ := expectDispatched(client.ObjectKeyFromObject(fillers[0]))
		gomega.Expect(manager.Delete(ctx, fillers[0])).To(gomega.Succeed())
		chosen, _ := expectDispatched(key)
		gomega.Expect(chosen.name).To(gomega.Equal(freed.name))
		done := expectManagerCondition(key, trainer.TrainJobComplete)
		gomega.Expect(done.Status).To(gomega.Equal(metav1.ConditionTrue))
		gomega.Expect(ptr.Deref(tj.Spec.ManagedBy, "")).To(gomega.Equal(trainer.ManagedByMultiKueue))
	})
})
