package schema

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("Install manifests", func() {
	ginkgo.It("are all accepted by the apiserver (server-side dry-run apply)", func() {
		// Dry-run creates no namespace, so the one everything installs into is created for real.
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "kubeflow-system"}}
		gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, ns))).To(gomega.Succeed())
		for _, dir := range []string{"config/default", "config/runtimes"} {
			data, err := util.Kustomize(dir)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			objs := decodeObjects(data)
			gomega.Expect(objs).NotTo(gomega.BeEmpty(), dir)
			for _, obj := range objs {
				err := k8sClient.Apply(ctx, client.ApplyConfigurationFromUnstructured(obj),
					client.FieldOwner("install-test"), client.ForceOwnership, client.DryRunAll)
				gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s: %s %s", dir, obj.GetKind(), obj.GetName())
			}
		}
	})
})
