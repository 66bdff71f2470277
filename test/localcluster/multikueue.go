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
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the layout sets up for MultiKueue, by name.
const (
	// MultiKueueAdmissionCheck is the manager's AdmissionCheck (controller
	// kueue.x-k8s.io/multikueue) a ClusterQueue lists to dispatch its jobs to the workers.
	MultiKueueAdmissionCheck = "multikueue"
	// multiKueueConfigName is the MultiKueueConfig listing every worker.
	multiKueueConfigName = "multikueue"
	// multiKueueServiceAccount is who the manager's Kueue is on each worker (kueue-system).
	multiKueueServiceAccount = "multikueue-manager"
	// MultiKueueWorkerUser is that ServiceAccount as the workers' apiservers authenticate it.
	MultiKueueWorkerUser = "system:serviceaccount:" + kueueNamespace + ":" + multiKueueServiceAccount
	// multiKueueWorkerRole is the ClusterRole bound to it on each worker.
	multiKueueWorkerRole = "gantry-multikueue-worker"
	// MultiKueueSecretPrefix names the manager's kubeconfig Secrets: <prefix><worker>.
	MultiKueueSecretPrefix = "multikueue-"
)

// Defaults of the layout, so a developer can submit at once: on every member a ResourceFlavor, a
// ClusterQueue serving every namespace (on the manager with the MultiKueue admission check) and,
// in namespace default, a LocalQueue pointing at it.
const (
	DefaultFlavor       = "default-flavor"
	DefaultClusterQueue = "cluster-queue"
	DefaultLocalQueue   = "user-queue"
)

// MultiKueueWorkerRules are what the manager's Kueue does on a worker, with the TrainJob
// integration only: create, watch and delete the Workloads and TrainJobs it dispatches, write the
// Workloads' status (the finalizer it removes), and read the TrainJobs' status it copies back.
// They are Kueue's own e2e rules (test/util/multikueue.go) for these two kinds, less the
// ClusterQueue and LocalQueue reads only its alpha MultiKueueManagerQuotaAutomation needs; the
// suite fails on any request of this user a worker refuses.
var MultiKueueWorkerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads"}, Verbs: []string{"create", "update", "patch", "delete", "get", "list", "watch"}},
	{APIGroups: []string{"kueue.x-k8s.io"}, Resources: []string{"workloads/status"}, Verbs: []string{"get", "patch", "update"}},
	{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"trainjobs"}, Verbs: []string{"create", "update", "patch", "delete", "get", "list", "watch"}},
	{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"trainjobs/status"}, Verbs: []string{"get"}},
}

// MultiKueueViewerRules are what Gantry's command line and UI read on a worker, through the
// manager's kubeconfig Secret for it, to show a dispatched job's steps, events and logs. Kueue
// needs none of them; without them the tools say the pods are forbidden. The layout grants them
// to the same identity so the suite reads across clusters as a user would.
var MultiKueueViewerRules = []rbacv1.PolicyRule{
	{APIGroups: []string{""}, Resources: []string{"pods"}, Verbs: []string{"get", "list", "watch"}},
	{APIGroups: []string{""}, Resources: []string{"pods/log"}, Verbs: []string{"get"}},
	{APIGroups: []string{""}, Resources: []string{"events"}, Verbs: []string{"list"}},
	{APIGroups: []string{"batch"}, Resources: []string{"jobs"}, Verbs: []string{"list"}},
}

// multiKueueConfig is the MultiKueue section of the manager's Kueue Configuration.
func multiKueueConfig() map[string]any {
	return map[string]any{
		// Kueue keeps a job on a worker it cannot reach for 15 minutes by default before it
		// dispatches it again; half a minute lets the suite stop a worker and see the move.
		"workerLostTimeout": "30s",
		// Objects left on a worker that comes back are collected every minute by default.
		"gcInterval": "30s",
	}
}

// ConnectMultiKueue gives the manager's Kueue a kubeconfig for each worker (a token of a
// ServiceAccount bound to MultiKueueWorkerRules there, in a Secret of kueue-system), and applies
// the MultiKueueClusters, the MultiKueueConfig, the AdmissionCheck and the default queues. It
// returns once Kueue reports every worker with Gantry connected and the check active.
func (f *Fleet) ConnectMultiKueue(ctx context.Context) error {
	mgr, mgrName := f.Manager()
	if mgr == nil {
		return errors.New("the layout has no manager")
	}
	mcl, err := mgr.Client()
	if err != nil {
		return err
	}
	workers := f.WorkerNames()
	for _, name := range workers {
		w := f.MustCluster(name)
		kubeconfig, err := w.multiKueueKubeconfig(ctx)
		if err != nil {
			return fmt.Errorf("%s: the manager's identity: %w", name, err)
		}
		if err := apply(ctx, mcl, kubeconfigSecret(MultiKueueSecretPrefix+name, kubeconfig), kueueObject("MultiKueueCluster", name, map[string]any{
			"clusterSource": map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": MultiKueueSecretPrefix + name}},
		})); err != nil {
			return fmt.Errorf("%s: %w", mgrName, err)
		}
		if err := w.applyDefaultQueues(ctx, false); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if err := apply(ctx, mcl,
		kueueObject("MultiKueueConfig", multiKueueConfigName, map[string]any{"clusters": stringsToAny(workers)}),
		kueueObject("AdmissionCheck", MultiKueueAdmissionCheck, map[string]any{
			"controllerName": "kueue.x-k8s.io/multikueue",
			"parameters":     map[string]any{"apiGroup": "kueue.x-k8s.io", "kind": "MultiKueueConfig", "name": multiKueueConfigName},
		}),
	); err != nil {
		return fmt.Errorf("%s: %w", mgrName, err)
	}
	if err := mgr.applyDefaultQueues(ctx, true); err != nil {
		return fmt.Errorf("%s: %w", mgrName, err)
	}
	return f.waitMultiKueue(ctx, mcl)
}

// waitMultiKueue waits until the admission check is active and every worker that runs Gantry is
// connected. A worker started without Gantry on purpose is only reported: the suite, not up,
// has to notice it.
func (f *Fleet) waitMultiKueue(ctx context.Context, mcl client.Client) error {
	_, mgrName := f.Manager()
	var expected, without []string
	for _, m := range f.Members {
		switch {
		case m.Role != RoleWorker:
		case m.Settings.WithoutGantry:
			without = append(without, m.Name)
		default:
			expected = append(expected, m.Name)
		}
	}
	err := waitFor(ctx, 2*time.Minute, "MultiKueue", func(ctx context.Context) error {
		var errs []error
		for _, name := range expected {
			errs = append(errs, MultiKueueClusterActive(ctx, mcl, name))
		}
		errs = append(errs, kueueObjectActive(ctx, mcl, "AdmissionCheck", MultiKueueAdmissionCheck))
		return errors.Join(errs...)
	})
	if err != nil {
		return fmt.Errorf("%s: %w", mgrName, err)
	}
	fprint := prefixed(f.Out, mgrName)
	for _, name := range without {
		state := MultiKueueClusterActive(ctx, mcl, name)
		if fprint != nil {
			_, _ = fmt.Fprintf(fprint, "  %s runs without Gantry on purpose; Kueue says: %v\n", name, state)
		}
	}
	if fprint != nil {
		_, _ = fmt.Fprintf(fprint, "  MultiKueue connected to %s; submit to LocalQueue %s in namespace default\n", strings.Join(expected, ", "), DefaultLocalQueue)
	}
	return nil
}

// MultiKueueClusterActive is nil when the manager's Kueue is connected to the worker, else an
// error with the reason and message of its Active condition.
func MultiKueueClusterActive(ctx context.Context, mcl client.Client, worker string) error {
	return kueueObjectActive(ctx, mcl, "MultiKueueCluster", worker)
}

func kueueObjectActive(ctx context.Context, cl client.Client, kind, name string) error {
	u := kueueObject(kind, name, nil)
	if err := cl.Get(ctx, client.ObjectKeyFromObject(u), u); err != nil {
		return fmt.Errorf("%s %s: %w", kind, name, err)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Active" {
			continue
		}
		if m["status"] == "True" {
			return nil
		}
		return fmt.Errorf("%s %s is not active: %v: %v", kind, name, m["reason"], m["message"])
	}
	return fmt.Errorf("%s %s has no Active condition yet", kind, name)
}

// multiKueueKubeconfig sets up, on a worker, the identity the manager's Kueue uses there, and
// returns a kubeconfig with a token of it (also written to config/multikueue.kubeconfig, to look
// with kubectl at what the manager sees). It waits until the authorizer sees the binding.
func (c *Cluster) multiKueueKubeconfig(ctx context.Context) ([]byte, error) {
	cl, err := c.Client()
	if err != nil {
		return nil, err
	}
	if c.pki == nil {
		// A worker that did not come up in this run: its CA is on disk.
		if err := c.loadPKI(); err != nil {
			return nil, err
		}
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: kueueNamespace, Name: multiKueueServiceAccount}}
	rules := append(slices.Clone(MultiKueueWorkerRules), MultiKueueViewerRules...)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: multiKueueWorkerRole}, Rules: rules}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: multiKueueWorkerRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: multiKueueWorkerRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: kueueNamespace, Name: multiKueueServiceAccount}},
	}
	for _, o := range []client.Object{sa, role, binding} {
		u, err := toUnstructured(cl.Scheme(), o)
		if err != nil {
			return nil, err
		}
		if err := apply(ctx, cl, u); err != nil {
			return nil, err
		}
	}
	// As long-lived as the cluster's certificates: Kueue refuses token files, so the token is
	// inline and is not renewed; every up issues a new one.
	tr := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To(int64(certValidity.Seconds()))}}
	if err := cl.SubResource("token").Create(ctx, sa, tr); err != nil {
		return nil, fmt.Errorf("requesting a token of ServiceAccount %s/%s: %w", sa.Namespace, sa.Name, err)
	}
	data, err := c.kubeconfigFor(multiKueueServiceAccount, c.pki.ca.CertPEM, tr.Status.Token)
	if err != nil {
		return nil, err
	}
	if err := writeFileAtomic(c.path("config", "multikueue.kubeconfig"), data, 0o600); err != nil {
		return nil, err
	}
	attrs := authorizationv1.ResourceAttributes{Verb: "watch", Group: "kueue.x-k8s.io", Resource: "workloads"}
	err = waitFor(ctx, time.Minute, "the MultiKueue user's RBAC", func(ctx context.Context) error {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: MultiKueueWorkerUser, Groups: []string{"system:serviceaccounts", "system:authenticated"}, ResourceAttributes: &attrs,
		}}
		if err := cl.Create(ctx, sar); err != nil {
			return err
		}
		if !sar.Status.Allowed {
			return fmt.Errorf("%s may not watch workloads yet", MultiKueueWorkerUser)
		}
		return nil
	})
	return data, err
}

// applyDefaultQueues applies the default ResourceFlavor, ClusterQueue and LocalQueue; the
// manager's ClusterQueue goes through the MultiKueue admission check.
func (c *Cluster) applyDefaultQueues(ctx context.Context, manager bool) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	n := c.Settings.Nodes
	gpus := n.Count * n.GPUsPerNode
	if manager {
		// The manager's quota only decides what it dispatches; the workers' decide what runs.
		gpus = 1000
	}
	cq := map[string]any{
		"namespaceSelector": map[string]any{},
		"resourceGroups": []any{map[string]any{
			"coveredResources": []any{"cpu", "memory", string(GPUResource)},
			"flavors": []any{map[string]any{"name": DefaultFlavor, "resources": []any{
				map[string]any{"name": "cpu", "nominalQuota": "1000"},
				map[string]any{"name": "memory", "nominalQuota": "10Ti"},
				map[string]any{"name": string(GPUResource), "nominalQuota": gpus},
			}}},
		}},
	}
	if manager {
		cq["admissionChecksStrategy"] = map[string]any{"admissionChecks": []any{map[string]any{"name": MultiKueueAdmissionCheck}}}
	}
	lq := kueueObject("LocalQueue", DefaultLocalQueue, map[string]any{"clusterQueue": DefaultClusterQueue})
	lq.SetNamespace("default")
	return apply(ctx, cl, kueueObject("ResourceFlavor", DefaultFlavor, map[string]any{}), kueueObject("ClusterQueue", DefaultClusterQueue, cq), lq)
}

// kueueObject is a cluster-scoped Kueue object (v1beta2) with a spec, unstructured.
func kueueObject(kind, name string, spec map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	u.SetAPIVersion("kueue.x-k8s.io/v1beta2")
	u.SetKind(kind)
	u.SetName(name)
	return u
}

// kubeconfigSecret is a MultiKueue kubeconfig Secret in kueue-system, under the key Kueue reads.
func kubeconfigSecret(name string, kubeconfig []byte) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret", "type": "Opaque",
		"metadata": map[string]any{"namespace": kueueNamespace, "name": name},
		"data":     map[string]any{"kubeconfig": b64(kubeconfig)},
	}}
}

func toUnstructured(s *runtime.Scheme, o client.Object) (*unstructured.Unstructured, error) {
	gvks, _, err := s.ObjectKinds(o)
	if err != nil {
		return nil, err
	}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(o)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{Object: m}
	u.SetGroupVersionKind(gvks[0])
	return u, nil
}

func stringsToAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
