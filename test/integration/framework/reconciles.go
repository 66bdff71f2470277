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

package framework

import (
	"context"
	"fmt"

	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/util"
)

// TrainJobReconciles is how many reconciles the TrainJob controller has finished in this process.
// controller-runtime's metrics registry is global, so it counts every in-process manager's; a
// suite runs one at a time. It fits Eventually and Consistently as it is.
func TrainJobReconciles() float64 {
	// The name internal/controller gives the TrainJob controller.
	return CounterSum("controller_runtime_reconcile_total", "controller", "trainjob_controller")
}

// CounterSum adds up the series of the counter name, in this process's controller-runtime
// metrics registry, whose label is value.
func CounterSum(name, label, value string) float64 {
	families, err := ctrlmetrics.Registry.Gather()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	total := 0.0
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == label && l.GetValue() == value {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// TouchTrainJob makes the TrainJob controller reconcile tj n times with nothing to change: each
// time it updates an annotation of tj and waits for one more finished reconcile, so updates are
// not merged in the work queue.
func TouchTrainJob(ctx context.Context, c client.Client, tj *trainer.TrainJob, n int) {
	for i := range n {
		before := TrainJobReconciles()
		gomega.Eventually(func(g gomega.Gomega) {
			cur := &trainer.TrainJob{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(tj), cur)).To(gomega.Succeed())
			cur.Annotations = map[string]string{"touch": fmt.Sprint(i)}
			g.Expect(c.Update(ctx, cur)).To(gomega.Succeed())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(TrainJobReconciles, util.Timeout, util.Interval).Should(gomega.BeNumerically(">", before))
	}
}
