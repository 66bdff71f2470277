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
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/manifest"
	"github.com/gantry-ml/gantry/test/util"
)

const publicName = "kubeflow-trainer-public"

// applyForReal applies objects server-side and deletes them when the spec ends.
func applyForReal(objs []*unstructured.Unstructured) {
	for _, obj := range objs {
		gomega.Expect(k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
			client.FieldOwner("install-test"), client.ForceOwnership)).To(gomega.Succeed(), "%s %s", obj.GetKind(), obj.GetName())
		ginkgo.DeferCleanup(func() {
			gomega.Expect(client.IgnoreNotFound(k8sClient.Delete(ctx, obj))).To(gomega.Succeed())
		})
	}
}

// The Kubeflow Python SDK's TrainerClient reads the Trainer version from this ConfigMap as the
// user it runs as: any authenticated user must be able to read it, and nothing else.
var _ = ginkgo.Describe("The public ConfigMap the Python SDK reads", func() {
	ginkgo.It("is readable by every authenticated user, alone, with the same version from kustomize and from the chart", func() {
		const chartNS = "sdk-chart"
		for _, ns := range []string{"kubeflow-system", chartNS} {
			obj := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}
			gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, obj))).To(gomega.Succeed())
		}
		data, err := util.Kustomize("config/public")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		kustomized, err := manifest.Decode(data)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(kinds(kustomized)).To(gomega.Equal(map[string]int{"ConfigMap": 1, "Role": 1, "RoleBinding": 1}))
		applyForReal(kustomized)
		rendered, err := util.HelmTemplate(chartNS)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var chart []*unstructured.Unstructured
		for _, obj := range rendered {
			if obj.GetName() == publicName {
				chart = append(chart, obj)
			}
		}
		gomega.Expect(kinds(chart)).To(gomega.Equal(map[string]int{"ConfigMap": 1, "Role": 1, "RoleBinding": 1}))
		applyForReal(chart)

		user, err := fwk.UserClient("sdk-user")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var versions []string
		for _, ns := range []string{"kubeflow-system", chartNS} {
			private := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "private"}}
			gomega.Expect(k8sClient.Create(ctx, private)).To(gomega.Succeed())
			ginkgo.DeferCleanup(func() { gomega.Expect(k8sClient.Delete(ctx, private)).To(gomega.Succeed()) })
			// RBAC is cached by the apiserver's authorizer: the new binding takes a moment.
			public := &corev1.ConfigMap{}
			gomega.Eventually(func() error {
				return user.Get(ctx, client.ObjectKey{Namespace: ns, Name: publicName}, public)
			}, util.Timeout, util.Interval).Should(gomega.Succeed(), ns)
			gomega.Expect(public.Data).To(gomega.HaveKey("kubeflow_trainer_version"))
			versions = append(versions, public.Data["kubeflow_trainer_version"])
			err := user.Get(ctx, client.ObjectKeyFromObject(private), &corev1.ConfigMap{})
			gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "reading another ConfigMap: %v", err)
			err = user.List(ctx, &corev1.ConfigMapList{}, client.InNamespace(ns))
			gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "listing ConfigMaps: %v", err)
		}
		gomega.Expect(versions[0]).To(gomega.Equal(versions[1]), "config/public and the chart's gantry.dev/kubeflow-trainer-version")
		// Kubeflow Trainer writes its release as a tag (v2.3.0), in its chart and its manifests.
		gomega.Expect(versions[0]).To(gomega.MatchRegexp(`^v\d+\.\d+\.\d+$`))
	})
})
