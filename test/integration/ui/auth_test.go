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
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/util"
)

// request fetches path from srv with the given headers.
func request(srv *httptest.Server, path string, header map[string]string) (int, string) {
	ginkgo.GinkgoHelper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for k, v := range header {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(resp.Body)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return resp.StatusCode, string(body)
}

const proxySecret = "the-proxy-secret-0123456789abcdef"

// proxyOf is header mode's proxy check with proxySecret in a file, as gantry-ui loads it.
func proxyOf(h ui.HeaderOptions) *ui.Proxy {
	ginkgo.GinkgoHelper()
	h.ProxySecretFile = filepath.Join(ginkgo.GinkgoT().TempDir(), "proxy-secret")
	gomega.Expect(os.WriteFile(h.ProxySecretFile, []byte(proxySecret), 0o600)).To(gomega.Succeed())
	p, err := h.Proxy()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return p
}

// readerOf binds the service account to reading TrainJobs, pods, logs and events of ns.
func readerOf(ns, sa string) {
	ginkgo.GinkgoHelper()
	gomega.Expect(k8sClient.Create(ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainjob-reader"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"trainjobs"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{""}, Resources: []string{"pods", "pods/log", "events"}, Verbs: []string{"get", "list", "watch"}},
		},
	})).To(gomega.Succeed())
	gomega.Expect(k8sClient.Create(ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "trainjob-reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "trainjob-reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: sa}},
	})).To(gomega.Succeed())
}

var _ = ginkgo.Describe("sign-in modes", func() {
	var a, b string
	var srv *ui.Server
	ginkgo.BeforeEach(func() {
		a, b = util.NewNamespace(ctx, k8sClient, "team"), util.NewNamespace(ctx, k8sClient, "team")
		readerOf(a, "alice")
		cs, err := kubernetes.NewForConfig(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		srv, err = ui.NewServer(store, ui.ClientsetOpener{Clientset: cs})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		srv.BaseConfig = fwk.Config
	})

	ginkgo.It("token mode: no token is 401; a user of namespace a is refused b, its stream too", func() {
		cs, err := kubernetes.NewForConfig(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		srv.Access = ui.NewAccess(cs, "", "")
		ts := httptest.NewServer(srv.Access.Wrap(srv.Handler()))
		defer ts.Close()

		code, body := request(ts, "/jobs?ns="+a, nil)
		gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized))
		gomega.Expect(body).To(gomega.ContainSubstring("send a bearer token"))
		code, _ = request(ts, "/jobs?ns="+a, map[string]string{"Authorization": "Bearer not-a-token"})
		gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized))

		token, err := fwk.RequestToken(ctx, a, "alice", 3600)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		alice := map[string]string{"Authorization": "Bearer " + token}
		code, body = request(ts, "/jobs?ns="+a, alice)
		gomega.Expect(code).To(gomega.Equal(http.StatusOK), body)
		code, body = request(ts, "/jobs?ns="+b, alice)
		gomega.Expect(code).To(gomega.Equal(http.StatusForbidden))
		gomega.Expect(body).To(gomega.ContainSubstring(fmt.Sprintf("forbidden: user &#34;system:serviceaccount:%s:alice&#34; may not list trainjobs in namespace %s", a, b)))
		code, _ = request(ts, "/live/jobs?ns="+b, alice)
		gomega.Expect(code).To(gomega.Equal(http.StatusForbidden))
		code, _ = request(ts, "/jobs", alice)
		gomega.Expect(code).To(gomega.Equal(http.StatusForbidden), "every namespace needs a cluster-wide list")
	})

	ginkgo.It("header mode: the proxy's header names the user; without it, 401", func() {
		cs, err := kubernetes.NewForConfig(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		srv.Access = ui.NewAccess(cs, "kubeflow-userid", "")
		srv.Access.Proxy = proxyOf(ui.HeaderOptions{AllowedUsers: []string{"system:serviceaccount:team-*"}})
		ts := httptest.NewServer(srv.Access.Wrap(srv.Handler()))
		defer ts.Close()
		code, body := request(ts, "/jobs?ns="+a, map[string]string{ui.DefaultProxySecretHeader: proxySecret})
		gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized))
		gomega.Expect(strings.TrimSpace(body)).To(gomega.Equal("unauthenticated: the trusted proxy sent no kubeflow-userid header"))
		user := map[string]string{ui.DefaultProxySecretHeader: proxySecret, "kubeflow-userid": "system:serviceaccount:" + a + ":alice"}
		code, _ = request(ts, "/jobs?ns="+a, user)
		gomega.Expect(code).To(gomega.Equal(http.StatusOK))
		code, _ = request(ts, "/jobs?ns="+b, user)
		gomega.Expect(code).To(gomega.Equal(http.StatusForbidden))
	})

	// The attack of issue 34: a client that reaches the pod directly names itself system:masters.
	ginkgo.It("header mode: an unverified client naming system:masters cannot list another namespace's TrainJobs", func() {
		gomega.Expect(k8sClient.Create(ctx, trainJob(b, "secret-plans", "auth-torch"))).To(gomega.Succeed())
		cs, err := kubernetes.NewForConfig(fwk.Config)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		srv.Access = ui.NewAccess(cs, "kubeflow-userid", "kubeflow-groups")
		ts := httptest.NewServer(srv.Access.Wrap(srv.Handler()))
		defer ts.Close()
		// The UI holds the job before the attack, so a refusal is not an empty cache.
		gomega.Eventually(func() (*trainer.TrainJob, error) { return store.TrainJob(ctx, b, "secret-plans") }).ShouldNot(gomega.BeNil())
		masters := map[string]string{"kubeflow-userid": "mallory", "kubeflow-groups": "system:masters"}
		code, body := request(ts, "/jobs?ns="+b, masters)
		gomega.Expect(body).NotTo(gomega.ContainSubstring("secret-plans"))
		gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized), body)
		gomega.Expect(strings.TrimSpace(body)).To(gomega.Equal("unauthenticated: header mode has no verified proxy (--proxy-secret-file), so it trusts no kubeflow-userid header"))

		// With the proxy's proof configured: a guessed secret is 401, and even the proxy may
		// not name a group the admin did not allow.
		srv.Access.Proxy = proxyOf(ui.HeaderOptions{AllowedGroups: []string{"team-*"}})
		masters[ui.DefaultProxySecretHeader] = "guessed-guessed-guessed"
		code, body = request(ts, "/jobs?ns="+b, masters)
		gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized), body)
		gomega.Expect(body).To(gomega.ContainSubstring("X-Gantry-Proxy-Secret is wrong"))
		masters[ui.DefaultProxySecretHeader] = proxySecret
		code, body = request(ts, "/jobs?ns="+b, masters)
		gomega.Expect(code).To(gomega.Equal(http.StatusForbidden), body)
		gomega.Expect(body).NotTo(gomega.ContainSubstring("secret-plans"))
		gomega.Expect(strings.TrimSpace(body)).To(gomega.Equal(`forbidden: the proxy named group "system:masters" (kubeflow-groups), which --allowed-groups does not allow to be impersonated`))
	})
})

var _ = ginkgo.It("kubeconfig mode: the one-time link sets a session; without it 401; another host name 403", func() {
	cs, err := kubernetes.NewForConfig(fwk.Config)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	srv, err := ui.NewServer(store, ui.ClientsetOpener{Clientset: cs})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	auth, err := ui.NewLocalAuth()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ts := httptest.NewServer(auth.Wrap(srv.Handler()))
	defer ts.Close()

	code, body := request(ts, "/jobs", nil)
	gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized))
	gomega.Expect(body).To(gomega.ContainSubstring("open the login link gantry ui printed"))
	code, _ = request(ts, "/jobs?token=wrong", nil)
	gomega.Expect(code).To(gomega.Equal(http.StatusUnauthorized))

	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Get(ts.URL + "/jobs?ns=x&token=" + auth.Token())
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	_ = resp.Body.Close()
	gomega.Expect(resp.StatusCode).To(gomega.Equal(http.StatusFound))
	gomega.Expect(resp.Header.Get("Location")).To(gomega.Equal("/jobs?ns=x"), "the token leaves the address bar")
	cookie := resp.Cookies()[0]
	gomega.Expect(cookie.HttpOnly).To(gomega.BeTrue())
	gomega.Expect(cookie.SameSite).To(gomega.Equal(http.SameSiteStrictMode))
	code, _ = request(ts, "/jobs?ns=x", map[string]string{"Cookie": cookie.Name + "=" + cookie.Value})
	gomega.Expect(code).To(gomega.Equal(http.StatusOK))

	code, body = request(ts, "/jobs", map[string]string{"Host": "evil.example", "Cookie": cookie.Name + "=" + cookie.Value})
	gomega.Expect(code).To(gomega.Equal(http.StatusForbidden))
	gomega.Expect(body).To(gomega.ContainSubstring("answers only to localhost and 127.0.0.1"))
})
