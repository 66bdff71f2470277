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

package localcluster

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldOwner is the server-side apply manager of everything the local cluster installs.
const fieldOwner = "gantry-local-cluster"

// writeKubeconfig writes the administrator kubeconfig: the cluster CA and a static token.
func (c *Cluster) writeKubeconfig(caPEM []byte, token string) error {
	return c.writeKubeconfigAs(c.Kubeconfig(), "gantry-local-admin", caPEM, token)
}

func (c *Cluster) writeKubeconfigAs(path, user string, caPEM []byte, token string) error {
	data, err := c.kubeconfigFor(user, caPEM, token)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, data, 0o600)
}

// kubeconfigFor is a kubeconfig reaching the cluster as user, with the CA and the token inline
// (MultiKueue refuses files in a kubeconfig).
func (c *Cluster) kubeconfigFor(user string, caPEM []byte, token string) ([]byte, error) {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gantry-local"] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", c.Settings.Ports.APIServer),
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["gantry-local"] = &clientcmdapi.Context{Cluster: "gantry-local", AuthInfo: user, Namespace: "default"}
	cfg.CurrentContext = "gantry-local"
	return clientcmd.Write(*cfg)
}

// The Gantry manager runs as the ServiceAccount config/rbac ships, bound to exactly the roles
// config/rbac ships: a rule the code needs and the install lacks fails here as it would in a
// real cluster, and the audit log shows which rules the manager uses.
const (
	gantryServiceAccount = "kubeflow-trainer-controller-manager"
	// ManagerNamespace is the manager's own namespace, its ServiceAccount's.
	ManagerNamespace = gantryNamespace
	// ManagerUser is the user the manager's requests are authenticated as.
	ManagerUser = "system:serviceaccount:" + gantryNamespace + ":" + gantryServiceAccount
)

// managerGroups are the groups the apiserver gives a token of the manager's ServiceAccount.
var managerGroups = []string{"system:serviceaccounts", "system:serviceaccounts:" + gantryNamespace, "system:authenticated"}

// ManagerKubeconfig is the kubeconfig the manager runs with: a token of its ServiceAccount.
func (c *Cluster) ManagerKubeconfig() string { return c.path("config", "gantry-manager.kubeconfig") }

// managerEnv points the manager at the cluster as its ServiceAccount.
// managerEnv is a manager process's environment; pod is the name it has as a pod (POD_NAME, its
// leader election identity).
func (c *Cluster) managerEnv(pod string) []string {
	return []string{"KUBECONFIG=" + c.ManagerKubeconfig(), "POD_NAME=" + pod}
}

// installManagerIdentity applies config/rbac (the ServiceAccount, its roles and their bindings),
// writes the manager's kubeconfig with a token of that ServiceAccount, and returns once the
// apiserver's authorizer sees every binding: its cache lags the objects, and the manager's first
// requests must not be refused.
func (c *Cluster) installManagerIdentity(ctx context.Context, cl client.Client) error {
	objs, err := c.kustomizeBuild(filepath.Join(c.Root, "config", "rbac"))
	if err != nil {
		return err
	}
	probes, err := managerRBACProbes(objs)
	if err != nil {
		return err
	}
	if err := apply(ctx, cl, objs...); err != nil {
		return err
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: gantryNamespace, Name: gantryServiceAccount}}
	// A token as long-lived as the cluster's certificates; a new one is issued whenever the
	// manager starts again.
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(certValidity.Seconds()))}}
	if err := cl.SubResource("token").Create(ctx, sa, tr); err != nil {
		return fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	if err := c.writeKubeconfigAs(c.ManagerKubeconfig(), gantryServiceAccount, c.pki.ca.CertPEM, tr.Status.Token); err != nil {
		return err
	}
	return waitFor(ctx, time.Minute, "the manager's RBAC", func(ctx context.Context) error {
		for _, attrs := range probes {
			sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
				User: ManagerUser, Groups: managerGroups, ResourceAttributes: &attrs,
			}}
			if err := cl.Create(ctx, sar); err != nil {
				return err
			}
			if !sar.Status.Allowed {
				return fmt.Errorf("%s may not %s %s/%s in %q yet", ManagerUser, attrs.Verb, attrs.Group, attrs.Resource, attrs.Namespace)
			}
		}
		return nil
	})
}

// managerRBACProbes checks that config/rbac binds the ServiceAccount the manager runs as, and
// returns one request per role bound to it (by the role's first rule that names a resource), to
// tell when the authorizer has every binding. Roles bound to others, such as the metrics reader
// (non-resource URLs, for the scraper), are not the manager's to wait for.
func managerRBACProbes(objs []*unstructured.Unstructured) ([]authorizationv1.ResourceAttributes, error) {
	bound := map[string]bool{}
	foundSA := false
	for _, o := range objs {
		switch o.GetKind() {
		case "ServiceAccount":
			foundSA = foundSA || (o.GetNamespace() == gantryNamespace && o.GetName() == gantryServiceAccount)
		case "RoleBinding", "ClusterRoleBinding":
			var b rbacv1.RoleBinding
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &b); err != nil {
				return nil, fmt.Errorf("%s %s: %w", o.GetKind(), objectName(o), err)
			}
			for _, s := range b.Subjects {
				if s.Kind == rbacv1.ServiceAccountKind && s.Name == gantryServiceAccount && cmp.Or(s.Namespace, o.GetNamespace()) == gantryNamespace {
					bound[roleKey(b.RoleRef.Kind, o.GetNamespace(), b.RoleRef.Name)] = true
				}
			}
		}
	}
	if !foundSA {
		return nil, fmt.Errorf("config/rbac has no ServiceAccount %s/%s, which the local cluster runs the manager as", gantryNamespace, gantryServiceAccount)
	}
	var probes []authorizationv1.ResourceAttributes
	for _, o := range objs {
		if (o.GetKind() != "Role" && o.GetKind() != "ClusterRole") || !bound[roleKey(o.GetKind(), o.GetNamespace(), o.GetName())] {
			continue
		}
		attrs, err := roleProbe(o)
		if err != nil {
			return nil, err
		}
		probes = append(probes, attrs)
	}
	return probes, nil
}

// roleKey names a role as a binding refers to it: a ClusterRole by name, a Role in the
// binding's namespace.
func roleKey(kind, namespace, name string) string {
	if kind == "ClusterRole" {
		return kind + "/" + name
	}
	return kind + "/" + namespace + "/" + name
}

// roleProbe is a request the role o allows: its first rule that names a resource.
func roleProbe(o *unstructured.Unstructured) (authorizationv1.ResourceAttributes, error) {
	var role rbacv1.ClusterRole
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &role); err != nil {
		return authorizationv1.ResourceAttributes{}, fmt.Errorf("%s %s: %w", o.GetKind(), objectName(o), err)
	}
	for _, r := range role.Rules {
		if len(r.APIGroups) == 0 || len(r.Resources) == 0 || len(r.Verbs) == 0 {
			continue
		}
		resource, sub, _ := strings.Cut(r.Resources[0], "/")
		attrs := authorizationv1.ResourceAttributes{
			Namespace: cmp.Or(o.GetNamespace(), gantryNamespace), Verb: r.Verbs[0],
			Group: r.APIGroups[0], Resource: resource, Subresource: sub,
		}
		if len(r.ResourceNames) > 0 {
			attrs.Name = r.ResourceNames[0]
		}
		return attrs, nil
	}
	return authorizationv1.ResourceAttributes{}, fmt.Errorf("%s %s is bound to the manager but no rule of it names a resource", o.GetKind(), objectName(o))
}

// RESTConfig reaches the cluster as its administrator.
func (c *Cluster) RESTConfig() (*rest.Config, error) {
	cfg, err := clientcmd.BuildConfigFromFlags("", c.Kubeconfig())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", c.Kubeconfig(), err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// Client returns a client with the core and apiextensions types; everything else goes through
// unstructured objects, so the cluster tooling does not depend on other projects' Go APIs.
func (c *Cluster) Client() (client.Client, error) {
	if c.kube != nil {
		return c.kube, nil
	}
	cfg, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		return nil, err
	}
	c.kube, err = client.New(cfg, client.Options{Scheme: s})
	return c.kube, err
}

// apply server-side applies objects, in order.
func apply(ctx context.Context, cl client.Client, objs ...*unstructured.Unstructured) error {
	for _, o := range objs {
		o.SetManagedFields(nil)
		o.SetResourceVersion("")
		err := cl.Apply(ctx, client.ApplyConfigurationFromUnstructured(o), client.FieldOwner(fieldOwner), client.ForceOwnership)
		if err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), objectName(o), err)
		}
	}
	return nil
}

func objectName(o client.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// waitFor polls cond every 200ms until it holds, ctx ends or timeout passes; the last error cond
// returned explains a timeout.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		err := cond(ctx)
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not ready after %s: %w", what, timeout, err)
		case <-tick.C:
		}
	}
}

// installCRDs applies CRDs and waits until the apiserver serves all of them.
func installCRDs(ctx context.Context, cl client.Client, crds []*unstructured.Unstructured) error {
	if err := apply(ctx, cl, crds...); err != nil {
		return err
	}
	names := make([]string, 0, len(crds))
	for _, crd := range crds {
		names = append(names, crd.GetName())
	}
	return waitFor(ctx, time.Minute, "CRDs "+strings.Join(names, ", "), func(ctx context.Context) error {
		for _, n := range names {
			crd := &apiextensionsv1.CustomResourceDefinition{}
			if err := cl.Get(ctx, types.NamespacedName{Name: n}, crd); err != nil {
				return err
			}
			established := false
			for _, cond := range crd.Status.Conditions {
				if cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue {
					established = true
				}
			}
			if !established {
				return fmt.Errorf("%s is not established", n)
			}
		}
		return nil
	})
}

// ensureNamespace creates a namespace unless it exists.
func ensureNamespace(ctx context.Context, cl client.Client, name string) error {
	ns := &unstructured.Unstructured{}
	ns.SetAPIVersion("v1")
	ns.SetKind("Namespace")
	ns.SetName(name)
	if err := cl.Create(ctx, ns); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating namespace %s: %w", name, err)
	}
	return nil
}
