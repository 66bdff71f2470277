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
	"context"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/jobview"
)

// The log follower's view of the cluster: every step waits on Changes at once, and each must
// wake on the change, not on the follower's 2 s recheck.
var _ = ginkgo.Describe("jobview.APISource", func() {
	ginkgo.It("wakes every waiter when a pod of the job appears", func() {
		tj := newJob("src", nil)
		r, err := jobview.NewReader(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		cs, err := kubernetes.NewForConfig(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		c, cancel := context.WithCancel(ctx)
		defer cancel()
		src := &jobview.APISource{Reader: r, Clientset: cs, Namespace: tj.Namespace, Name: tj.Name, Context: c}
		defer src.Close()

		// The first Changes opens the watches, which tell of the TrainJob there is; after
		// that, waiters wait for a real change.
		gomega.Eventually(src.Changes(c), "5s").Should(gomega.BeClosed())
		woke := make(chan time.Duration, 3)
		start := time.Now()
		for range 3 {
			changes := src.Changes(c)
			go func() { <-changes; woke <- time.Since(start) }()
		}
		gomega.Consistently(woke, "300ms").ShouldNot(gomega.Receive())
		gomega.Expect(k8sClient.Create(ctx, &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Namespace: tj.Namespace, Name: "src-node-0-0-aaaaa", Labels: map[string]string{
				jobset.JobSetNameKey: tj.Name, jobset.ReplicatedJobNameKey: "node"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "x"}}},
		})).To(gomega.Succeed())
		changed := time.Since(start)
		for range 3 {
			var d time.Duration
			gomega.Eventually(woke, "5s").Should(gomega.Receive(&d))
			gomega.Expect(d - changed).To(gomega.BeNumerically("<", time.Second))
		}
		got, pods, err := src.Snapshot(ctx)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(got.Name).To(gomega.Equal("src"))
		gomega.Expect(jobview.Steps(pods)).To(gomega.HaveLen(1))
	})
})
