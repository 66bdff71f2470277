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

package migration

import (
	"encoding/json"
	"os"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	admissionv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/controller"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// kept is what the reference left of an object, compared with what Gantry finds.
type kept struct {
	uid         types.UID
	spec        string
	labels      map[string]string
	annotations map[string]string
	conditions  []metav1.Condition
}

func keep(obj client.Object, spec any, conditions []metav1.Condition) kept {
	data, err := json.Marshal(spec)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return kept{uid: obj.GetUID(), spec: string(data), labels: obj.GetLabels(), annotations: obj.GetAnnotations(), conditions: conditions}
}

// expectKept checks obj against what the reference left: the same object (UID), spec, labels and
// annotations, and every condition it had, unchanged.
func expectKept(obj client.Object, spec any, conditions []metav1.Condition, was kept) {
	now := keep(obj, spec, conditions)
	gomega.Expect(now.uid).To(gomega.Equal(was.uid), "%s is the same object", obj.GetName())
	gomega.Expect(now.spec).To(gomega.MatchJSON(was.spec), "%s keeps its spec", obj.GetName())
	gomega.Expect(now.labels).To(gomega.Equal(was.labels), "%s keeps its labels", obj.GetName())
	gomega.Expect(now.annotations).To(gomega.Equal(was.annotations), "%s keeps its annotations", obj.GetName())
	for _, c := range was.conditions {
		got := apimeta.FindStatusCondition(now.conditions, c.Type)
		gomega.Expect(got).NotTo(gomega.BeNil(), "%s keeps its %s condition", obj.GetName(), c.Type)
		// observedGeneration is the one field a reconcile may bring up to date.
		got.ObservedGeneration = c.ObservedGeneration
		gomega.Expect(*got).To(gomega.Equal(c), "%s keeps its %s condition", obj.GetName(), c.Type)
	}
}

func key(ns, name string) client.ObjectKey { return client.ObjectKey{Namespace: ns, Name: name} }

// The reference's chart installed with the objects it leaves, the guide's steps, then Gantry.
var _ = ginkgo.Describe("moving from Kubeflow Trainer v2.3's Helm chart to Gantry's", ginkgo.Ordered, func() {
	var (
		home, chartDir string
		reference      *fwk.Manager
		unserve        func()
		gantry         *fwk.Manager
		before         = map[string]kept{}
		runningJobSet  types.UID
		suspendedJS    types.UID
	)

	ginkgo.BeforeAll(func() {
		var err error
		home, err = os.MkdirTemp("", "gantry-migration-helm-")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { _ = os.RemoveAll(home) })
		chartDir = referenceChart()
	})

	ginkgo.AfterAll(func() {
		for _, m := range []*fwk.Manager{reference, gantry} {
			if m != nil {
				_ = m.Stop()
			}
		}
	})

	ginkgo.It("is the procedure docs/migration.md shows", func() {
		guide := guideCommands()
		for _, step := range guideSteps {
			gomega.Expect(guide).To(gomega.ContainSubstring(step))
		}
	})

	ginkgo.It("starts from the reference's chart, with TrainJobs running, suspended and finished", func() {
		run(home, chartDir, "helm install kubeflow-trainer "+referenceChartRef+" -n kubeflow-system --create-namespace --set jobset.install=false")
		for _, name := range []string{"trainjobs.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org"} {
			gomega.Expect(crd(name).GetAnnotations()).To(gomega.HaveKeyWithValue("meta.helm.sh/release-name", "kubeflow-trainer"))
		}
		reference = startReferenceStandIn()
		unserve = serveWebhooks()
		gomega.Expect(k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: userNS}})).To(gomega.Succeed())
		createReferenceObjects()

		ctr := &trainer.ClusterTrainingRuntime{}
		gomega.Expect(k8sClient.Get(ctx, key("", "team-torch"), ctr)).To(gomega.Succeed())
		before["ctr"] = keep(ctr, ctr.Spec, nil)
		tr := &trainer.TrainingRuntime{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "team-plain"), tr)).To(gomega.Succeed())
		before["tr"] = keep(tr, tr.Spec, nil)
		for _, name := range []string{"running", "suspended", "finished"} {
			tj := &trainer.TrainJob{}
			gomega.Expect(k8sClient.Get(ctx, key(userNS, name), tj)).To(gomega.Succeed())
			before[name] = keep(tj, tj.Spec, tj.Status.Conditions)
		}
		js := &jobsetv1alpha2.JobSet{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "running"), js)).To(gomega.Succeed())
		runningJobSet = js.UID
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "suspended"), js)).To(gomega.Succeed())
		suspendedJS = js.UID
	})

	ginkgo.It("stops the reference and uninstalls it, keeping the CRDs and every object", func() {
		// replicas=0 below ends the reference's pods: its webhook server goes with them.
		gomega.Expect(reference.Stop()).To(gomega.Succeed())
		reference = nil
		unserve()
		manifest := run(home, chartDir, "helm get manifest kubeflow-trainer -n kubeflow-system")
		gomega.Expect(manifest).To(gomega.ContainSubstring("kind: CustomResourceDefinition"),
			"chart 2.3 holds the CRDs in its release: uninstalling it as it is would delete them, and every TrainJob")

		run(home, chartDir, stepProtectCRDs)
		run(home, chartDir, stepReleaseCRDs)
		manager := &appsv1.Deployment{}
		gomega.Expect(k8sClient.Get(ctx, key(systemNS, "kubeflow-trainer-controller-manager"), manager)).To(gomega.Succeed())
		gomega.Expect(manager.Spec.Replicas).To(gomega.Equal(ptr.To[int32](0)))
		manifest = run(home, chartDir, "helm get manifest kubeflow-trainer -n kubeflow-system")
		gomega.Expect(manifest).NotTo(gomega.ContainSubstring("kind: CustomResourceDefinition"))

		run(home, chartDir, stepUninstall)
		gomega.Eventually(gone(manager), util.Timeout, util.Interval).Should(gomega.BeTrue())
		gomega.Expect(gone(&admissionv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: validatingName}})()).To(gomega.BeTrue())
		gomega.Expect(gone(&admissionv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: mutatingName}})()).To(gomega.BeTrue())
		gomega.Expect(gone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: systemNS, Name: "kubeflow-trainer-public"}})()).To(gomega.BeTrue())
		for _, name := range []string{"running", "suspended", "finished"} {
			tj := &trainer.TrainJob{}
			gomega.Expect(k8sClient.Get(ctx, key(userNS, name), tj)).To(gomega.Succeed(), "TrainJob %s survives the uninstall", name)
			gomega.Expect(tj.UID).To(gomega.Equal(before[name].uid))
		}
	})

	ginkgo.It("adopts the CRDs into Gantry's release and installs Gantry", func() {
		run(home, chartDir, stepLabelCRDs)
		run(home, chartDir, stepAdoptCRDs)
		gomega.Expect(run(home, chartDir, stepInstall)).To(gomega.ContainSubstring("STATUS: deployed"))
		for _, name := range []string{"trainjobs.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org", "clustertrainingruntimes.trainer.kubeflow.org"} {
			obj := crd(name)
			gomega.Expect(obj.GetAnnotations()).To(gomega.HaveKeyWithValue("meta.helm.sh/release-name", "gantry"), name)
			gomega.Expect(obj.GetAnnotations()).To(gomega.HaveKeyWithValue("helm.sh/resource-policy", "keep"), name)
		}
		// Gantry's schema replaced the reference's: its status fields are there.
		_, found, err := unstructuredField(crd("trainjobs.trainer.kubeflow.org"),
			"spec", "versions", "0", "schema", "openAPIV3Schema", "properties", "status", "properties", "buildError")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(found).To(gomega.BeTrue(), "the TrainJob CRD is Gantry's")
		public := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, key(systemNS, "kubeflow-trainer-public"), public)).To(gomega.Succeed())
		gomega.Expect(public.Annotations).To(gomega.HaveKeyWithValue("meta.helm.sh/release-name", "gantry"))
		gomega.Expect(public.Data).To(gomega.HaveKey("kubeflow_trainer_version"))

		gantry = startGantry()
		serveWebhooks()
	})

	ginkgo.It("removes the reference's in-use finalizer from the runtimes and keeps them as they were", func() {
		ctr := &trainer.ClusterTrainingRuntime{}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key("", "team-torch"), ctr)).To(gomega.Succeed())
			g.Expect(ctr.Finalizers).NotTo(gomega.ContainElement(trainer.ResourceInUseFinalizer))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		expectKept(ctr, ctr.Spec, nil, before["ctr"])
		tr := &trainer.TrainingRuntime{}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "team-plain"), tr)).To(gomega.Succeed())
			g.Expect(tr.Finalizers).NotTo(gomega.ContainElement(trainer.ResourceInUseFinalizer))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		expectKept(tr, tr.Spec, nil, before["tr"])
	})

	ginkgo.It("keeps the finished TrainJob finished: nothing is built for it", func() {
		tj := &trainer.TrainJob{}
		gomega.Consistently(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "finished"), tj)).To(gomega.Succeed())
			g.Expect(gone(&jobsetv1alpha2.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: userNS, Name: "finished"}})()).To(gomega.BeTrue())
			g.Expect(gone(&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: userNS, Name: ref.SnapshotName(tj)}})()).To(gomega.BeTrue())
		}, 3*time.Second, util.Interval).Should(gomega.Succeed())
		expectKept(tj, tj.Spec, tj.Status.Conditions, before["finished"])
	})

	ginkgo.It("adopts the running TrainJob's JobSet and reports its progress and completion", func() {
		tj := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "running"), tj)).To(gomega.Succeed())
		// Gantry snapshots the runtime of a TrainJob it builds; the reference left none.
		gomega.Eventually(func() error {
			return k8sClient.Get(ctx, key(userNS, ref.SnapshotName(tj)), &corev1.ConfigMap{})
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		js := &jobsetv1alpha2.JobSet{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "running"), js)).To(gomega.Succeed())
		gomega.Expect(js.UID).To(gomega.Equal(runningJobSet), "the JobSet is the reference's, not a new one")
		gomega.Expect(js.Generation).To(gomega.Equal(int64(1)), "a running JobSet is never rewritten")
		gomega.Expect(js.Labels).To(gomega.Equal(jobSetLabels))

		js.Status.ReplicatedJobsStatus = []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Ready: 1, Active: 1, Succeeded: 1}}
		gomega.Expect(k8sClient.Status().Update(ctx, js)).To(gomega.Succeed())
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "running"), tj)).To(gomega.Succeed())
			g.Expect(tj.Status.JobsStatus).To(gomega.Equal([]trainer.JobStatus{jobStatus("node", 1, 1, 1, 0)}))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		expectKept(tj, tj.Spec, tj.Status.Conditions, before["running"])
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "running"), js)).To(gomega.Succeed())
			g.Expect(js.Finalizers).To(gomega.ContainElement(controller.OutcomeFinalizer), "the adopted running JobSet keeps its outcome for Gantry")
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(js.Generation).To(gomega.Equal(int64(1)), "the finalizer is metadata: the running JobSet's spec is untouched")
	})

	ginkgo.It("records the adopted JobSet's completion when it completed and was deleted while the manager was down", func() {
		gomega.Expect(gantry.Stop()).To(gomega.Succeed())
		gantry = nil
		js := &jobsetv1alpha2.JobSet{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "running"), js)).To(gomega.Succeed())
		completeJobSet(js)
		// JobSet's ttlSecondsAfterFinished, or a user, while no Gantry watches.
		gomega.Expect(k8sClient.Delete(ctx, js)).To(gomega.Succeed())
		gantry = startGantry()

		tj := &trainer.TrainJob{}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "running"), tj)).To(gomega.Succeed())
			g.Expect(apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobFailed)).To(gomega.BeFalse(),
				"recorded Failed: %v", apimeta.FindStatusCondition(tj.Status.Conditions, trainer.TrainJobFailed))
			g.Expect(apimeta.IsStatusConditionTrue(tj.Status.Conditions, trainer.TrainJobComplete)).To(gomega.BeTrue())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Eventually(gone(js), util.Timeout, util.Interval).Should(gomega.BeTrue(), "released once its outcome is recorded")
	})

	ginkgo.It("keeps the suspended TrainJob, and renders its JobSet anew when it is resumed", func() {
		tj := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, key(userNS, "suspended"), tj)).To(gomega.Succeed())
		expectKept(tj, tj.Spec, tj.Status.Conditions, before["suspended"])
		// Through Gantry's webhooks, as a user or Kueue would.
		tj.Spec.Suspend = ptr.To(false)
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
		js := &jobsetv1alpha2.JobSet{}
		gomega.Eventually(func(g gomega.Gomega) {
			g.Expect(k8sClient.Get(ctx, key(userNS, "suspended"), js)).To(gomega.Succeed())
			g.Expect(js.Spec.Suspend).To(gomega.Equal(ptr.To(false)))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(js.UID).To(gomega.Equal(suspendedJS), "the reference's suspended JobSet is updated, not replaced")
		gomega.Expect(js.Finalizers).To(gomega.ContainElement(controller.OutcomeFinalizer), "Gantry wrote it")
		gomega.Expect(js.Labels).To(gomega.HaveKeyWithValue("example.com/cost-center", "research"))
		pod := js.Spec.ReplicatedJobs[0].Template.Spec.Template.Spec
		gomega.Expect(pod.Containers[0].Image).To(gomega.Equal("example.com/train:v2"), "the TrainJob's trainer image")
		gomega.Expect(js.Spec.ReplicatedJobs[0].Template.Spec.Parallelism).To(gomega.Equal(ptr.To[int32](2)), "the TrainJob's numNodes")
	})
})
