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

package ui

import (
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/util"
)

// kueueCRD serves a Kueue kind with any content: the suite has no Kueue, only its objects.
func kueueCRD(plural, kind string, scope apiextensionsv1.ResourceScope) *apiextensionsv1.CustomResourceDefinition {
	return &apiextensionsv1.CustomResourceDefinition{
		ObjectMeta: metav1.ObjectMeta{Name: plural + ".kueue.x-k8s.io"},
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: "kueue.x-k8s.io", Scope: scope,
			Names: apiextensionsv1.CustomResourceDefinitionNames{Plural: plural, Kind: kind, ListKind: kind + "List"},
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{Name: "v1beta2", Served: true, Storage: true,
				Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
					Type: "object", XPreserveUnknownFields: ptr.To(true)}}}},
		},
	}
}

// The worker is this same control plane, reached through a kubeconfig Secret whose
// ServiceAccount may read pods: a user who may read the Secret sees the pods though they may not
// list pods themselves; one who may not is told which Secret, and sees none.
var _ = ginkgo.It("MultiKueue: the worker and its pods to a user who may read its kubeconfig Secret, why not to one who may not", func() {
	ext, err := apiextensionsclient.NewForConfig(fwk.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for _, crd := range []*apiextensionsv1.CustomResourceDefinition{
		kueueCRD("workloads", "Workload", apiextensionsv1.NamespaceScoped),
		kueueCRD("multikueueclusters", "MultiKueueCluster", apiextensionsv1.ClusterScoped),
	} {
		if _, err := ext.ApiextensionsV1().CustomResourceDefinitions().Create(ctx, crd, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
		}
	}
	gomega.Eventually(func() error {
		l := &unstructured.UnstructuredList{}
		l.SetGroupVersionKind(multicluster.ClusterListGVK)
		return k8sClient.List(ctx, l)
	}).Should(gomega.Succeed())

	ns, kueueNS := util.NewNamespace(ctx, k8sClient, "mk"), util.NewNamespace(ctx, k8sClient, "kueue")
	tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bert"},
		Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "torch"}, ManagedBy: ptr.To(trainer.ManagedByMultiKueue)}}
	gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "bert-node-0-0-abcde", Labels: map[string]string{
		jobset.JobSetNameKey: "bert", jobset.ReplicatedJobNameKey: "node", jobset.JobIndexKey: "0", "batch.kubernetes.io/job-completion-index": "0",
		trainer.AncestorLabel: trainer.AncestorTrainer}},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "node", Image: "node:test"}}}}
	gomega.Expect(k8sClient.Create(ctx, pod)).To(gomega.Succeed())
	wl := &unstructured.Unstructured{Object: map[string]any{"status": map[string]any{"clusterName": "worker1"}}}
	wl.SetGroupVersionKind(trainjob.WorkloadGVK)
	wl.SetNamespace(ns)
	wl.SetName("trainjob-bert-1a2b3")
	wl.SetLabels(map[string]string{trainjob.WorkloadJobUIDLabel: string(tj.UID)})
	gomega.Expect(k8sClient.Create(ctx, wl)).To(gomega.Succeed())
	mkc := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterSource": map[string]any{
		"kubeConfig": map[string]any{"locationType": "Secret", "location": "worker1-kubeconfig"}}}}}
	mkc.SetGroupVersionKind(multicluster.ClusterGVK)
	mkc.SetName("worker1")
	gomega.Expect(client.IgnoreAlreadyExists(k8sClient.Create(ctx, mkc))).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() { _ = k8sClient.Delete(ctx, mkc) })

	// The worker's identity: Kueue's ServiceAccount there, which reads pods.
	grant(ns, ns, "kueue-worker", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "events"}, Verbs: []string{"get", "list", "watch"}})
	workerToken, err := fwk.RequestToken(ctx, ns, "kueue-worker", 3600)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	kubeconfig := `apiVersion: v1
kind: Config
clusters:
- name: worker1
  cluster: {server: "` + fwk.Config.Host + `", certificate-authority-data: "` + b64(fwk.Config.CAData) + `"}
users:
- name: kueue
  user: {token: "` + workerToken + `"}
contexts:
- name: worker1
  context: {cluster: worker1, user: kueue}
current-context: worker1
`
	gomega.Expect(k8sClient.Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: kueueNS, Name: "worker1-kubeconfig"},
		Data: map[string][]byte{multicluster.KubeconfigKey: []byte(kubeconfig)}})).To(gomega.Succeed())

	// alice may read TrainJobs and the Secret, not pods; bob TrainJobs only.
	jobs := rbacv1.PolicyRule{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"trainjobs"}, Verbs: []string{"get", "list", "watch"}}
	grant(ns, ns, "alice", jobs)
	grant(ns, ns, "bob", jobs)
	grant(kueueNS, ns, "alice", rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{"worker1-kubeconfig"}, Verbs: []string{"get"}})
	grantCluster("alice-"+ns, ns, "alice", rbacv1.PolicyRule{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"multikueueclusters"}, Verbs: []string{"get"}})
	grantCluster("bob-"+ns, ns, "bob", rbacv1.PolicyRule{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"multikueueclusters"}, Verbs: []string{"get"}})

	// A store started after Kueue's kinds exist watches Workloads.
	st, err := ui.NewStore(fwk.Config, ui.StoreOptions{Namespaces: []string{ns}})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(st.Start(ctx)).To(gomega.Succeed())
	cs, err := kubernetes.NewForConfig(fwk.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	srv, err := ui.NewServer(st, ui.ClientsetOpener{Clientset: cs})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	srv.BaseConfig, srv.KueueNamespace, srv.Access = fwk.Config, kueueNS, ui.NewAccess(cs, "", "")
	ts := httptest.NewServer(srv.Access.Wrap(srv.Handler()))
	defer ts.Close()

	as := func(sa string) map[string]string {
		token, err := fwk.RequestToken(ctx, ns, sa, 3600)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		return map[string]string{"Authorization": "Bearer " + token}
	}
	alice, bob := as("alice"), as("bob")
	gomega.Eventually(func(g gomega.Gomega) {
		code, body := request(ts, "/jobs/"+ns+"/bert", alice)
		g.Expect(code).To(gomega.Equal(http.StatusOK), body)
		g.Expect(body).To(gomega.ContainSubstring("worker1 (MultiKueue)"))
		g.Expect(body).To(gomega.ContainSubstring("bert-node-0-0-abcde"))
	}).Should(gomega.Succeed())

	code, body := request(ts, "/jobs/"+ns+"/bert", bob)
	gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
	gomega.Expect(body).To(gomega.ContainSubstring("worker1 (its pods are not shown: cannot read Secret " + kueueNS + "/worker1-kubeconfig: forbidden)"))
	gomega.Expect(body).To(gomega.ContainSubstring("The pods on worker worker1 are not shown."))
	gomega.Expect(body).NotTo(gomega.ContainSubstring("bert-node-0-0-abcde"))
	gomega.Expect(strings.Count(body, "forbidden")).To(gomega.Equal(1), "the reason is said once")

	_, body = request(ts, "/logs/"+ns+"/bert?step=node-0", bob)
	gomega.Expect(body).To(gomega.ContainSubstring("event: failure\ndata: TrainJob bert runs on worker worker1 (MultiKueue); its logs cannot be read there: cannot read Secret " + kueueNS + "/worker1-kubeconfig: forbidden"))
	gomega.Expect(body).NotTo(gomega.ContainSubstring(workerToken))
})

// grant binds the ServiceAccount saNS/sa to rule in ns.
func grant(ns, saNS, sa string, rule rbacv1.PolicyRule) {
	ginkgo.GinkgoHelper()
	name := "grant-" + sa + "-" + saNS
	gomega.Expect(k8sClient.Create(ctx, &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Rules: []rbacv1.PolicyRule{rule}})).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: saNS, Name: sa}}})).To(gomega.Succeed())
}

// grantCluster binds the ServiceAccount saNS/sa to a cluster-wide rule.
func grantCluster(name, saNS, sa string, rule rbacv1.PolicyRule) {
	ginkgo.GinkgoHelper()
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{rule}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: saNS, Name: sa}}}
	gomega.Expect(k8sClient.Create(ctx, role)).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, binding)).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() { _ = k8sClient.Delete(ctx, binding); _ = k8sClient.Delete(ctx, role) })
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
