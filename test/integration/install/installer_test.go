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

package install

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gcustom"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// The installer as the chart's hooks run it: the rendered Jobs' own arguments and the rendered
// ConfigMap, against the API server.
var _ = ginkgo.Describe("The chart's runtime installer", ginkgo.Ordered, func() {
	ginkgo.BeforeAll(func() {
		// A runtime an administrator applied by hand and one another release installed: the
		// installer of release "gantry" must leave both alone.
		for name, l := range map[string]map[string]string{
			"site-torch":          {trainer.WebhookValidationLabel: trainer.WebhookValidationDisabled},
			"other-release-torch": {"app.kubernetes.io/instance": "other", "app.kubernetes.io/managed-by": "gantry-runtime-installer"},
		} {
			rt := utiltesting.MakeClusterTrainingRuntimeWrapper(name).Obj()
			rt.Labels = l
			gomega.Expect(k8sClient.Create(ctx, rt)).To(gomega.Succeed())
			ginkgo.DeferCleanup(func() { gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, rt))).To(gomega.Succeed()) })
		}
	})

	install := func(args ...string) ([]*unstructured.Unstructured, string) {
		objs, err := util.HelmTemplate("kubeflow-system", args...)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		job := renderedHook(objs, "post-install,post-upgrade")
		return objs, installer.Run(job.Spec.Template.Spec, renderedConfigMaps(objs))
	}

	ginkgo.It("applies the enabled runtimes whole", func() {
		objs, out := install("--set", "runtimes.torchDistributed.enabled=true",
			"--set", "runtimes.deepspeedDistributed.enabled=true", "--set", "runtimes.torchtuneDistributed.llama3_2_1B.enabled=true")
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "deepspeed-distributed", "torchtune-llama3.2-1b"))
		gomega.Expect(out).To(gomega.ContainSubstring("clustertrainingruntime/deepspeed-distributed applied\n"))
		for _, want := range runtimesOf(objs) {
			got := &unstructured.Unstructured{}
			got.SetGroupVersionKind(want.GroupVersionKind())
			gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(want), got)).To(gomega.Succeed())
			gomega.Expect(got.Object["metadata"].(map[string]any)["labels"]).To(gomega.Equal(want.Object["metadata"].(map[string]any)["labels"]))
			gomega.Expect(got.Object["spec"]).To(gcustom.MakeMatcher(func(g any) (bool, error) {
				return apply.Subset(want.Object["spec"], g), nil
			}), want.GetName())
		}
	})

	ginkgo.It("on an upgrade, deletes the runtimes it installed that are no longer enabled, and only those", func() {
		_, out := install("--set", "runtimes.torchDistributed.enabled=true", "--set", "runtimes.jaxDistributed.enabled=true")
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "jax-distributed"))
		gomega.Expect(out).To(gomega.ContainSubstring("clustertrainingruntime/deepspeed-distributed deleted\n"))
		gomega.Expect(runtimeExists("site-torch")).To(gomega.BeTrue())
		gomega.Expect(runtimeExists("other-release-torch")).To(gomega.BeTrue())
	})

	ginkgo.It("prunes everything on an upgrade that disables every runtime", func() {
		// Rendered against the API server: the chart looks up the runtimes this release installed
		// to decide whether the installer has anything to prune.
		objs, err := util.HelmTemplate("kubeflow-system", "--is-upgrade", "--dry-run=server", "--kubeconfig", installer.Kubeconfig)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		job := renderedHook(objs, "post-install,post-upgrade")
		installer.Run(job.Spec.Template.Spec, renderedConfigMaps(objs))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.BeEmpty())
		gomega.Expect(runtimeExists("site-torch")).To(gomega.BeTrue())
	})

	ginkgo.It("renders no installer on an upgrade with nothing to prune", func() {
		// Another release's runtime and a hand-applied one are still there: neither is this
		// release's, so there is nothing for a hook Job to do, and none holds helm upgrade.
		gomega.Expect(runtimeExists("other-release-torch")).To(gomega.BeTrue())
		objs, err := util.HelmTemplate("kubeflow-system", "--is-upgrade", "--dry-run=server", "--kubeconfig", installer.Kubeconfig)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(kinds(objs)).NotTo(gomega.HaveKey("Job"))
	})

	ginkgo.It("removes the runtimes it installed on uninstall", func() {
		objs, _ := install("--set", "runtimes.defaultEnabled=true")
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.HaveLen(8))
		job := renderedHook(objs, "pre-delete")
		out := installer.Run(job.Spec.Template.Spec, renderedConfigMaps(objs))
		gomega.Expect(out).To(gomega.ContainSubstring("clustertrainingruntime/xgboost-distributed deleted\n"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.BeEmpty())
		gomega.Expect(runtimeExists("site-torch")).To(gomega.BeTrue())
		gomega.Expect(runtimeExists("other-release-torch")).To(gomega.BeTrue())
	})
})
