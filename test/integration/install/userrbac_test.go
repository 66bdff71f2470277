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
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// aggregate does for the built-in ClusterRole name what kube-controller-manager's ClusterRole
// aggregation controller does, which envtest does not run: its rules become those of every
// ClusterRole its aggregationRule selects. The selectors are the API server's own, so the chart's
// roles reach the built-in one only if their labels match them.
func aggregate(name string) {
	role := &rbacv1.ClusterRole{}
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, role)).To(gomega.Succeed())
	gomega.Expect(role.AggregationRule).NotTo(gomega.BeNil(), "%s aggregates", name)
	var rules []rbacv1.PolicyRule
	for _, s := range role.AggregationRule.ClusterRoleSelectors {
		selector, err := metav1.LabelSelectorAsSelector(&s)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		roles := &rbacv1.ClusterRoleList{}
		gomega.Expect(k8sClient.List(ctx, roles, client.MatchingLabelsSelector{Selector: selector})).To(gomega.Succeed())
		for _, r := range roles.Items {
			if r.Name != name {
				rules = append(rules, r.Rules...)
			}
		}
	}
	role.Rules = rules
	gomega.Expect(k8sClient.Update(ctx, role)).To(gomega.Succeed())
}

// bind binds user to the ClusterRole role in namespace ns, as a namespace's admin does.
func bind(ns, user, role string) {
	rb := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: user + "-" + role},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
		Subjects:   []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}},
	}
	gomega.Expect(k8sClient.Create(ctx, rb)).To(gomega.Succeed())
}

// userRBAC returns the chart's user ClusterRoles and the runtime reader's binding (not the
// manager's role nor the metrics scraper's).
func userRBAC() []*unstructured.Unstructured {
	objs, err := util.HelmTemplate("kubeflow-system")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if (o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding") && o.GetLabels()["app.kubernetes.io/part-of"] == "gantry" &&
			!strings.HasSuffix(o.GetName(), "-controller-manager") && !strings.HasSuffix(o.GetName(), "-metrics-reader") {
			out = append(out, o)
		}
	}
	gomega.Expect(kinds(out)).To(gomega.Equal(map[string]int{"ClusterRole": 4, "ClusterRoleBinding": 1}))
	return out
}

// What the Kubeflow Python SDK does as a namespace user: list ClusterTrainingRuntimes, then create
// and follow TrainJobs in the namespace, with only the built-in roles a cluster hands out.
var _ = ginkgo.Describe("The chart's user RBAC", ginkgo.Ordered, func() {
	var ns, other string

	ginkgo.BeforeAll(func() {
		applyForReal(userRBAC())
		for _, role := range []string{"view", "edit", "admin"} {
			aggregate(role)
		}
	})

	ginkgo.BeforeEach(func() {
		ns = util.NewNamespace(ctx, k8sClient, "team")
		other = util.NewNamespace(ctx, k8sClient, "other-team")
	})

	ginkgo.It("lets a user bound to edit in a namespace list ClusterTrainingRuntimes and create TrainJobs there, only there", func() {
		bind(ns, "alice", "edit")
		alice, err := fwk.UserClient("alice")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		// RBAC is cached by the apiserver's authorizer: the new rules take a moment.
		gomega.Eventually(func() error {
			return alice.Create(ctx, utiltesting.MakeTrainJobWrapper(ns, "mnist").Obj())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		gomega.Expect(alice.List(ctx, &trainer.ClusterTrainingRuntimeList{})).To(gomega.Succeed())
		gomega.Expect(alice.List(ctx, &trainer.TrainingRuntimeList{}, client.InNamespace(ns))).To(gomega.Succeed())
		gomega.Expect(alice.List(ctx, &trainer.TrainJobList{}, client.InNamespace(ns))).To(gomega.Succeed())
		tj := &trainer.TrainJob{}
		gomega.Expect(alice.Get(ctx, client.ObjectKey{Namespace: ns, Name: "mnist"}, tj)).To(gomega.Succeed())
		gomega.Expect(alice.Delete(ctx, tj)).To(gomega.Succeed())

		err = alice.Create(ctx, utiltesting.MakeTrainJobWrapper(other, "mnist").Obj())
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "a TrainJob in another namespace: %v", err)
		err = alice.Create(ctx, utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Obj())
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "a TrainingRuntime needs admin: %v", err)
	})

	ginkgo.It("lets a user bound to view read, not write", func() {
		bind(ns, "bob", "view")
		bob, err := fwk.UserClient("bob")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(func() error {
			return bob.List(ctx, &trainer.TrainJobList{}, client.InNamespace(ns))
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
		err = bob.Create(ctx, utiltesting.MakeTrainJobWrapper(ns, "mnist").Obj())
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "creating a TrainJob: %v", err)
	})

	ginkgo.It("lets a user bound to admin publish TrainingRuntimes in the namespace", func() {
		bind(ns, "carol", "admin")
		carol, err := fwk.UserClient("carol")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(func() error {
			return carol.Create(ctx, utiltesting.MakeTrainingRuntimeWrapper(ns, "torch").Obj())
		}, util.Timeout, util.Interval).Should(gomega.Succeed())
	})

	ginkgo.It("lets any authenticated user list ClusterTrainingRuntimes, and nothing in a namespace", func() {
		dave, err := fwk.UserClient("dave")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(dave.List(ctx, &trainer.ClusterTrainingRuntimeList{})).To(gomega.Succeed())
		err = dave.List(ctx, &trainer.TrainJobList{}, client.InNamespace(ns))
		gomega.Expect(apierrors.IsForbidden(err)).To(gomega.BeTrue(), "listing TrainJobs: %v", err)
	})
})
