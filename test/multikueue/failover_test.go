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
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/localcluster"
)

// moveTimeout bounds the move to the other worker: the manager's Kueue waits workerLostTimeout
// (30 s in the layout) before it gives the lost worker's workload up, then dispatches again.
const moveTimeout = 3 * time.Minute

var _ = ginkgo.Describe("A worker lost", func() {
	ginkgo.It("re-admits the workload on the other worker when the chosen worker's cluster stops, and the job runs there", func() {
		ns := newNamespace("failover")
		gpuQueues(ns)
		tj := trainJob(ns, "moves", 1, 8, "10m")
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		lost, _ := expectDispatched(key)
		expectRunningOn(lost, key, 1)
		other := otherWorker(lost)
		// Before the namespaces go: the worker comes back with its data. Kueue v0.19.2 leaves
		// the copy it held while the manager's Workload lives on elsewhere (its GC removes a
		// worker's copy only once the manager's Workload is gone, docs/install.md), so the
		// manager's TrainJob is deleted, and the copy must then go.
		ginkgo.DeferCleanup(func() {
			startAgain(lost)
			gomega.Expect(client.IgnoreNotFound(manager.Delete(ctx, tj))).To(gomega.Succeed())
			expectNothingOn(lost, key)
		})

		ginkgo.By("stopping " + lost.name + "'s cluster")
		gomega.Expect(lost.lc.Down()).To(gomega.Succeed())
		stopped := time.Now()
		gomega.Eventually(func(g gomega.Gomega) {
			here := &trainer.TrainJob{}
			g.Expect(manager.Get(ctx, key, here)).To(gomega.Succeed())
			name, _, _ := unstructured.NestedString(workloadOf(g, manager, here).Object, "status", "clusterName")
			g.Expect(name).To(gomega.Equal(other.name), "the worker the manager's Workload is admitted on")
		}).WithTimeout(moveTimeout).Should(gomega.Succeed())
		expectRunningOn(other, key, 1)
		ginkgo.GinkgoWriter.Printf("the job runs on %s %s after %s stopped\n", other.name, time.Since(stopped).Round(time.Second), lost.name)
	})
})

// startAgain brings a stopped worker back with its data, gives the manager's Kueue a new token
// for it, and waits until Kueue is connected to it again.
func startAgain(w *member) {
	ginkgo.GinkgoHelper()
	w.lc.KeepData = true
	gomega.Expect(w.lc.Up(ctx)).To(gomega.Succeed())
	gomega.Expect(fleet.ConnectMultiKueue(ctx)).To(gomega.Succeed())
	gomega.Eventually(func() error {
		return localcluster.MultiKueueClusterActive(ctx, manager.Client, w.name)
	}).Should(gomega.Succeed())
}
