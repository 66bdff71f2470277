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
	"context"
	"fmt"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fieldOwner is the server-side apply manager of everything the local cluster installs.
const fieldOwner = "gantry-local-cluster"

// writeKubeconfig writes the administrator kubeconfig: the cluster CA and a static token.
func (c *Cluster) writeKubeconfig(caPEM []byte, token string) error {
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["gantry-local"] = &clientcmdapi.Cluster{
		Server:                   fmt.Sprintf("https://127.0.0.1:%d", c.Settings.Ports.APIServer),
		CertificateAuthorityData: caPEM,
	}
	cfg.AuthInfos["gantry-local-admin"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["gantry-local"] = &clientcmdapi.Context{Cluster: "gantry-local", AuthInfo: "gantry-local-admin", Namespace: "default"}
	cfg.CurrentContext = "gantry-local"
	data, err := clientcmd.Write(*cfg)
	if err != nil {
		return err
	}
	return writeFileAtomic(c.Kubeconfig(), data, 0o600)
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
