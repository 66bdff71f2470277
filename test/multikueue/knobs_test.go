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
	"context"
	"sync"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/knobs"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/torch"
)

var _ = ginkgo.Describe("Gantry's annotations under MultiKueue", func() {
	ginkgo.It("reach the worker's copy: elastic torch is rendered there; the TTL deletes the manager's TrainJob, which ran once", func() {
		ns := newNamespace("knobs")
		gpuQueues(ns)
		copies := recordCopies(ns)
		tj := trainJob(ns, "elastic", 2, 8, "10s")
		tj.Annotations = map[string]string{
			knobs.ElasticMinNodes: "1", knobs.ElasticMaxNodes: "4", knobs.TTLSecondsAfterFinished: "5",
		}
		gomega.Expect(manager.Create(ctx, tj)).To(gomega.Succeed())
		key := client.ObjectKeyFromObject(tj)
		w, _ := expectDispatched(key)
		expectRunningOn(w, key, 2)
		remote := copyOn(gomega.Default, w, key)
		gomega.Expect(remote.Annotations).To(gomega.And(
			gomega.HaveKeyWithValue(knobs.ElasticMinNodes, "1"), gomega.HaveKeyWithValue(knobs.ElasticMaxNodes, "4"),
			gomega.HaveKeyWithValue(knobs.TTLSecondsAfterFinished, "5")))
		for _, p := range runningPods(gomega.Default, w, key) {
			gomega.Expect(env(&p, torch.EnvNumNodes)).To(gomega.Equal("1:4"), "pod %s on %s: torchrun's elastic node range", p.Name, w.name)
			gomega.Expect(env(&p, torch.EnvMaxRestarts)).To(gomega.Equal("3"), "pod %s on %s", p.Name, w.name)
		}

		done := expectManagerCondition(key, trainer.TrainJobComplete)
		gomega.Eventually(func() bool {
			return apierrors.IsNotFound(manager.Get(ctx, key, &trainer.TrainJob{}))
		}).Should(gomega.BeTrue(), "the manager's TrainJob at the end of its TTL")
		gomega.Expect(time.Since(done.LastTransitionTime.Time)).To(gomega.BeNumerically(">=", 5*time.Second), "deleted before its TTL of 5 s")
		expectEvent(ns, tj.Name, controller.ReasonTTLExpired)
		// Kueue deletes the worker's copy itself once the outcome is back; had the worker's Gantry
		// deleted it first, Kueue would have dispatched the job again.
		gomega.Consistently(copies.count, 5*time.Second).Should(gomega.Equal(1), "copies of the TrainJob made on the workers")
	})
})

// env is the value of an environment variable of a pod's first container that sets it.
func env(p *corev1.Pod, name string) string {
	for _, c := range p.Spec.Containers {
		for _, e := range c.Env {
			if e.Name == name {
				return e.Value
			}
		}
	}
	return ""
}

// expectEvent waits for an event of that reason about the object of that name in ns, on the manager.
func expectEvent(ns, name, reason string) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func(g gomega.Gomega) {
		events := &corev1.EventList{}
		g.Expect(manager.List(ctx, events, client.InNamespace(ns))).To(gomega.Succeed())
		g.Expect(events.Items).To(gomega.ContainElement(gomega.And(
			gomega.HaveField("InvolvedObject.Name", name), gomega.HaveField("Reason", reason))))
	}).Should(gomega.Succeed())
}

// copyRecorder keeps the UID of every TrainJob created in a namespace of the workers.
type copyRecorder struct {
	mu   sync.Mutex
	uids map[types.UID]string
}

func (r *copyRecorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.uids)
}

// recordCopies watches the TrainJobs of ns on every worker until the spec ends: a watch sees
// a copy that lived a second, which polling could miss.
func recordCopies(ns string) *copyRecorder {
	ginkgo.GinkgoHelper()
	r := &copyRecorder{uids: map[types.UID]string{}}
	for _, w := range workers {
		informers, err := cache.New(w.cfg, cache.Options{Scheme: w.Scheme(), DefaultNamespaces: map[string]cache.Config{ns: {}}})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		inf, err := informers.GetInformer(ctx, &trainer.TrainJob{})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_, err = inf.AddEventHandler(toolscache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
			if tj, ok := o.(*trainer.TrainJob); ok {
				r.mu.Lock()
				r.uids[tj.UID] = w.name
				r.mu.Unlock()
			}
		}})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		wctx, cancel := context.WithCancel(ctx)
		ginkgo.DeferCleanup(cancel)
		go func() { _ = informers.Start(wctx) }()
		gomega.Expect(informers.WaitForCacheSync(wctx)).To(gomega.BeTrue())
	}
	return r
}
