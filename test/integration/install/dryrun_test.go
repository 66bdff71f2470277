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
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/manifest"
	"github.com/gantry-ml/gantry/test/util"
)

// dryRunApply applies every object server-side with dry-run: the API server runs defaulting,
// schema validation and admission on each, and stores nothing.
func dryRunApply(source string, objs []*unstructured.Unstructured) {
	gomega.Expect(objs).NotTo(gomega.BeEmpty(), source)
	for _, obj := range objs {
		err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("install-test"), client.ForceOwnership, client.DryRunAll)
		gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s: %s %s", source, obj.GetKind(), obj.GetName())
	}
}

func kinds(objs []*unstructured.Unstructured) map[string]int {
	n := map[string]int{}
	for _, o := range objs {
		n[o.GetKind()]++
	}
	return n
}

var _ = ginkgo.Describe("Install manifests, applied server-side with dry-run", func() {
	ginkgo.BeforeEach(func() {
		// Dry-run creates no namespace, so the one everything installs into is created for real.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeflow-system"}}
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(gomega.Succeed())
	})

	for _, dir := range []string{"config/default", "config/runtimes"} {
		ginkgo.It("accepts every object of kustomize build "+dir, func() {
			data, err := util.Kustomize(dir)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			objs, err := manifest.Decode(data)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			dryRunApply(dir, objs)
		})
	}

	ginkgo.It("accepts every object of the chart with its default values, JobSet's CRD included", func() {
		objs, err := util.HelmTemplate("kubeflow-system", "--include-crds")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		dryRunApply("helm template (defaults)", objs)
		gomega.Expect(kinds(objs)).To(gomega.HaveKeyWithValue("CustomResourceDefinition", 5), "four of trainer.kubeflow.org and JobSet's")
		gomega.Expect(kinds(objs)).NotTo(gomega.HaveKey("Job"), "no runtime is enabled by default")
	})

	ginkgo.It("accepts every object of the chart with everything enabled, runtimes and hooks included", func() {
		values := filepath.Join(util.ChartDir(), "ci", "all-enabled-values.yaml")
		objs, err := util.HelmTemplate("kubeflow-system", "--include-crds", "-f", values)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		dryRunApply("helm template (all enabled)", objs)
		gomega.Expect(kinds(objs)).To(gomega.HaveKeyWithValue("Job", 2))

		// The runtimes travel inside the installer's ConfigMap: each is accepted too.
		runtimes := runtimesOf(objs)
		gomega.Expect(runtimes).To(gomega.HaveLen(8))
		dryRunApply("the installer's runtimes", runtimes)
	})
})

// runtimesOf decodes the runtimes in the rendered installer ConfigMap.
func runtimesOf(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "ConfigMap" || o.GetName() != "kubeflow-trainer-runtimes" {
			continue
		}
		data, _, err := unstructured.NestedStringMap(o.Object, "data")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		for file, doc := range data {
			rts, err := manifest.Decode([]byte(doc))
			gomega.Expect(err).NotTo(gomega.HaveOccurred(), file)
			out = append(out, rts...)
		}
	}
	return out
}
