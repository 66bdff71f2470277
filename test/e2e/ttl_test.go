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
	"os"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/knobs"
)

// deletions records, from a watch, when each TrainJob of a namespace finished, when its delete
// was asked (the apiserver's deletionTimestamp) and when it was gone.
type deletions struct {
	mu       sync.Mutex
	finished map[string]time.Time
	deleted  map[string]time.Time
	gone     map[string]time.Time
}

func watchDeletions(ns string) (*deletions, func()) {
	wc, err := client.NewWithWatch(restConfig, client.Options{Scheme: testScheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	w, err := wc.Watch(ctx, &trainer.TrainJobList{}, client.InNamespace(ns))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	d := &deletions{finished: map[string]time.Time{}, deleted: map[string]time.Time{}, gone: map[string]time.Time{}}
	go func() {
		for ev := range w.ResultChan() {
			tj, ok := ev.Object.(*trainer.TrainJob)
			if !ok {
				continue
			}
			d.mu.Lock()
			if c := conditionTrue(tj, trainer.TrainJobComplete); c != nil {
				d.finished[tj.Name] = c.LastTransitionTime.Time
			}
			if tj.DeletionTimestamp != nil {
				d.deleted[tj.Name] = tj.DeletionTimestamp.Time
			}
			if ev.Type == watch.Deleted {
				d.gone[tj.Name] = time.Now()
			}
			d.mu.Unlock()
		}
	}()
	return d, w.Stop
}

func (d *deletions) counts() (finished, gone int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.finished), len(d.gone)
}

// cleanPodsWatch is how long the clean-pods spec watches a finished TrainJob for a JobSet made
// again; E2E_CLEAN_PODS_WATCH=5m is the full watch (docs/testing.md).
func cleanPodsWatch() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("E2E_CLEAN_PODS_WATCH")); err == nil {
		return d
	}
	return 20 * time.Second
}

var _ = ginkgo.Describe("TTL after finish", ginkgo.Serial, func() {
	ginkgo.It("deletes 50 finished TrainJobs at their deadline, across a SIGKILL of the manager", func() {
		const n, ttl = 50, 5 * time.Second
		ns := newNamespace("ttl")
		d, stop := watchDeletions(ns)
		defer stop()
		for i := range n {
			// Finishing over about 5 s, so some deadlines pass while the manager is down.
			tj := simulate(trainJob(ns, fmt.Sprintf("ttl-%02d", i), clusterRuntime, "torch-distributed", 1, 0),
				map[string]map[string]string{"node": {simDuration: fmt.Sprintf("%dms", 3000+100*i)}})
			tj.Annotations = map[string]string{knobs.TTLSecondsAfterFinished: "5"}
			gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		}
		gomega.Eventually(func() int { f, _ := d.counts(); return f }, timeout, 50*time.Millisecond).Should(gomega.Equal(n))
		// The schedule, not a synchronisation: the kill comes 2 s after the last finish,
		// and the manager stays down for 10 s.
		<-time.After(2 * time.Second)
		gomega.Expect(cluster.Kill("gantry-manager")).To(gomega.Succeed())
		killed := time.Now()
		<-time.After(10 * time.Second)
		_, goneWhileDown := d.counts()
		gomega.Expect(cluster.Restart("gantry-manager")).To(gomega.Succeed())
		restarted := time.Now()
		// The restart is done when the manager is ready again, as a pod's restart is: how long a
		// process takes to start depends on the machine's load, not on Gantry's TTL.
		gomega.Expect(cluster.WaitHealthy(ctx, "gantry-manager", time.Minute)).To(gomega.Succeed())
		ready := time.Now()
		gomega.Eventually(func() int { _, g := d.counts(); return g }, timeout, 20*time.Millisecond).Should(gomega.Equal(n))
		allGone := time.Since(ready)

		d.mu.Lock()
		defer d.mu.Unlock()
		var lastDeleted time.Time
		for name, fin := range d.finished {
			// deletionTimestamp and the condition's time are whole seconds; the deadline is the
			// condition's time plus the TTL.
			del, ok := d.deleted[name]
			gomega.Expect(ok).To(gomega.BeTrue(), "%s was removed without a recorded delete", name)
			gomega.Expect(del).To(gomega.BeTemporally(">=", fin.Add(ttl)), "%s was deleted before its deadline", name)
			if del.After(lastDeleted) {
				lastDeleted = del
			}
		}
		ginkgo.GinkgoWriter.Printf("TTL: %d of %d gone before the kill+10 s; the manager was ready %s after its restart; the other %d were deleted by %s and gone %s after it was ready (killed at %s)\n",
			goneWhileDown, n, ready.Sub(restarted).Round(time.Millisecond), n-goneWhileDown, lastDeleted.Sub(ready).Round(time.Second),
			allGone.Round(time.Millisecond), killed.Format(time.RFC3339))
		gomega.Expect(goneWhileDown).To(gomega.BeNumerically("<", n), "no deadline fell in the manager's downtime")
		// Gantry's part: the deletes come within 2 s of the ready manager (deletionTimestamp is
		// whole seconds). The garbage collector then removes each TrainJob after its JobSet, Jobs
		// and pods (foreground), at its own pace: its work queue allows 10 retries a second in
		// all, so 50 cascades take seconds (allGone, reported above).
		gomega.Expect(lastDeleted.Sub(ready)).To(gomega.BeNumerically("<", 2*time.Second))
	})

	ginkgo.It("with clean-pods: All, removes the JobSet and pods at the finish and keeps the TrainJob Complete", func() {
		ns := newNamespace("clean")
		tj := simulate(trainJob(ns, "clean", clusterRuntime, "torch-distributed", 2, 1),
			map[string]map[string]string{"node": {simDuration: "2s"}})
		tj.Annotations = map[string]string{knobs.TTLCleanPods: "All"}
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		expectCondition(keyOf(tj), trainer.TrainJobComplete)
		gomega.Eventually(func(g gomega.Gomega) {
			err := k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "JobSet: %v", err)
			g.Expect(podsOf(ns, tj.Name)).To(gomega.BeEmpty())
		}).Should(gomega.Succeed())
		status := getTrainJob(keyOf(tj)).Status
		gomega.Expect(status.JobsStatus).NotTo(gomega.BeEmpty())
		touches := 0
		gomega.Consistently(func(g gomega.Gomega) {
			got := &trainer.TrainJob{}
			g.Expect(k8sClient.Get(ctx, keyOf(tj), got)).To(gomega.Succeed())
			g.Expect(got.Status).To(gomega.Equal(status))
			// Each look also changes the TrainJob, which reconciles it.
			touches++
			patch := client.MergeFrom(got.DeepCopy())
			got.Annotations["e2e.gantry.dev/touch"] = fmt.Sprint(touches)
			g.Expect(k8sClient.Patch(ctx, got, patch)).To(gomega.Succeed())
			err := k8sClient.Get(ctx, keyOf(tj), &jobsetv1alpha2.JobSet{})
			g.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue(), "a JobSet was made again: %v", err)
		}, cleanPodsWatch(), time.Second).Should(gomega.Succeed())
	})
})
