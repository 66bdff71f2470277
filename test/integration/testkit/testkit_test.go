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

// Package testkit checks the public test kit (pkg/testkit) beyond what the downstream example
// shows: runtime selection, a restarted manager, and the JobSet states the kit refuses to play.
package testkit

import (
	"context"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/pkg/testkit"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	ctx context.Context
	env *envtest.Environment
)

func TestTestkit(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Test kit suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	var err error
	env, err = testkit.Environment()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	env.BinaryAssetsDirectory, err = util.EnvtestAssets()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	_, err = env.Start()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(env.Stop)
})

// start runs the kit for the current container and stops it when the container ends.
func start(opts testkit.Options) *testkit.Gantry {
	g, err := testkit.Start(ctx, env, opts)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(g.Stop)
	return g
}

func runtimeNames(c client.Client) []string {
	list := &trainer.ClusterTrainingRuntimeList{}
	gomega.Expect(c.List(ctx, list)).To(gomega.Succeed())
	names := []string{}
	for _, rt := range list.Items {
		names = append(names, rt.Name)
	}
	return names
}

func trainJob(ns, name string, suspend bool) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To[int32](2)},
			Suspend:    ptr.To(suspend),
		},
	}
}

var _ = ginkgo.Describe("The test kit", ginkgo.Ordered, func() {
	ginkgo.It("installs only the runtimes Options name, and none with NoRuntimes", func() {
		g := start(testkit.Options{NoRuntimes: true, Runtimes: []string{"torch-distributed"}})
		gomega.Expect(runtimeNames(g.Client)).To(gomega.BeEmpty())
		gomega.Expect(g.Stop()).To(gomega.Succeed())

		g = start(testkit.Options{Runtimes: []string{"torch-distributed", "deepspeed-distributed"}})
		gomega.Expect(runtimeNames(g.Client)).To(gomega.ConsistOf("torch-distributed", "deepspeed-distributed"))
		gomega.Expect(g.Stop()).To(gomega.Succeed())
	})

	ginkgo.It("starts again after Stop, and the new manager finishes TrainJobs", func() {
		g := start(testkit.Options{Runtimes: []string{"torch-distributed"}})
		ns := util.NewNamespace(ctx, g.Client, "testkit")
		gomega.Expect(g.Client.Create(ctx, trainJob(ns, "again", false))).To(gomega.Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "again"}
		js, err := g.CompleteTrainJob(ctx, key)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(js.Status.ReplicatedJobsStatus).To(gomega.ConsistOf(
			jobsetv1alpha2.ReplicatedJobStatus{Name: "node", Succeeded: 1}))
		tj, err := g.WaitForTrainJob(ctx, key, trainer.TrainJobComplete)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(tj.Status.JobsStatus).To(gomega.ConsistOf(gomega.HaveField("Succeeded", gomega.HaveValue(gomega.BeEquivalentTo(1)))))
	})

	ginkgo.It("refuses to finish the JobSet of a suspended TrainJob", func() {
		g := start(testkit.Options{Runtimes: []string{"torch-distributed"}})
		ns := util.NewNamespace(ctx, g.Client, "testkit")
		gomega.Expect(g.Client.Create(ctx, trainJob(ns, "held", true))).To(gomega.Succeed())
		key := types.NamespacedName{Namespace: ns, Name: "held"}
		_, err := g.FailTrainJob(ctx, key, "", "")
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("is suspended")))
		js := &jobsetv1alpha2.JobSet{}
		gomega.Expect(g.Client.Get(ctx, key, js)).To(gomega.Succeed())
		gomega.Expect(apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetFailed))).To(gomega.BeFalse())
	})

	ginkgo.It("times out naming what it waited for", func() {
		g := start(testkit.Options{NoRuntimes: true, Timeout: 500 * time.Millisecond})
		_, err := g.WaitForJobSet(ctx, types.NamespacedName{Namespace: "default", Name: "nothing"})
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("waiting for the JobSet of TrainJob default/nothing")))
		gomega.Expect(err).To(gomega.MatchError(gomega.ContainSubstring("not found")))
	})
})
