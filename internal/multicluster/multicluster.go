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

// Package multicluster finds where Kueue's MultiKueue runs a manager cluster's TrainJob and how
// to reach that worker cluster: the one place the command line and the web UI ask. The manager's
// Workload of the job names the worker (status.clusterName, Kueue v1beta2); the worker is a
// MultiKueueCluster whose kubeconfig is a Secret in Kueue's namespace, read with the caller's
// identity, so only who may read that Secret sees the worker's pods.
//
// Kueue's objects are read unstructured: Gantry does not depend on Kueue's Go module. The
// kubeconfig is never printed, logged or returned as text: only the rest.Config built from it.
package multicluster

import (
	"context"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Kueue's names for reaching a worker (kueue.x-k8s.io/v1beta2, Kueue v0.19).
const (
	// DefaultKueueNamespace is where Kueue's manifests install its controller, and so where
	// MultiKueue's kubeconfig Secrets are (its config namespace).
	DefaultKueueNamespace = "kueue-system"
	// KubeconfigKey is the key of a MultiKueue kubeconfig Secret (MultiKueueConfigSecretKey).
	KubeconfigKey = "kubeconfig"
	// MaxKubeconfigBytes bounds the kubeconfig read: a real one, with its certificates, is a
	// few KiB.
	MaxKubeconfigBytes = 256 << 10
	// ReasonMultiKueue is what the command line and UI say runs a dispatched job.
	ReasonMultiKueue = "MultiKueue"
)

// ClusterGVK is MultiKueueCluster, cluster-scoped.
var (
	ClusterGVK     = schema.GroupVersionKind{Group: "kueue.x-k8s.io", Version: "v1beta2", Kind: "MultiKueueCluster"}
	ClusterListGVK = ClusterGVK.GroupVersion().WithKind("MultiKueueClusterList")
)

// Placement is where MultiKueue runs a manager cluster's TrainJob.
type Placement struct {
	// Workload names the manager's Kueue Workload of the job, "" when there is none (yet).
	Workload string `json:"workload,omitempty"`
	// Worker is the MultiKueueCluster the job was dispatched to; "" until Kueue chose one.
	Worker string `json:"worker,omitempty"`
	// Nominated are the workers MultiKueue is trying, before it chose one.
	Nominated []string `json:"nominated,omitempty"`
	// Waiting says, until the job is dispatched, which Kueue state holds it.
	Waiting string `json:"waiting,omitempty"`
	// PodsHidden says why the worker's pods are not shown: the worker's kubeconfig cannot be
	// read by this user, or the worker cannot be reached. "" when they are, or not asked.
	PodsHidden string `json:"podsHidden,omitempty"`
}

// Dispatched reports whether Kueue chose the worker.
func (p *Placement) Dispatched() bool { return p != nil && p.Worker != "" }

// PlacementOf reads a manager cluster's Workload (nil when Kueue has none for the job yet):
// the worker it was dispatched to, or the state it waits in.
func PlacementOf(wl *unstructured.Unstructured) Placement {
	if wl == nil {
		return Placement{Waiting: "Kueue has no Workload for it yet"}
	}
	p := Placement{Workload: wl.GetName()}
	p.Worker, _, _ = unstructured.NestedString(wl.Object, "status", "clusterName")
	if p.Worker != "" {
		return p
	}
	p.Nominated, _, _ = unstructured.NestedStringSlice(wl.Object, "status", "nominatedClusterNames")
	conds := conditions(wl)
	checks, _, _ := unstructured.NestedSlice(wl.Object, "status", "admissionChecks")
	var pending []string
	for _, c := range checks {
		m, ok := c.(map[string]any)
		if !ok {
			continue
		}
		name, _ := m["name"].(string)
		state, _ := m["state"].(string)
		if state == "Ready" {
			continue
		}
		text := fmt.Sprintf("admission check %s is %s", name, state)
		if msg, _ := m["message"].(string); msg != "" {
			text += ": " + msg
		}
		pending = append(pending, text)
	}
	switch {
	case conds["Finished"] != nil && conds["Finished"]["status"] == "True":
		p.Waiting = "its Workload " + p.Workload + " is finished" + suffix(conds["Finished"])
	case conds["Evicted"] != nil && conds["Evicted"]["status"] == "True":
		p.Waiting = "its Workload " + p.Workload + " was evicted" + suffix(conds["Evicted"])
	case conds["QuotaReserved"] == nil || conds["QuotaReserved"]["status"] != "True":
		p.Waiting = "its Workload " + p.Workload + " waits for quota" + suffix(conds["QuotaReserved"])
	case len(p.Nominated) > 0:
		p.Waiting = "MultiKueue is trying workers " + strings.Join(p.Nominated, ", ")
	case len(pending) > 0:
		p.Waiting = strings.Join(pending, "; ")
	default:
		p.Waiting = "its Workload " + p.Workload + " has quota; MultiKueue has not chosen a worker yet"
	}
	return p
}

func conditions(u *unstructured.Unstructured) map[string]map[string]any {
	out := map[string]map[string]any{}
	list, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range list {
		if m, ok := c.(map[string]any); ok {
			if t, ok := m["type"].(string); ok {
				out[t] = m
			}
		}
	}
	return out
}

func suffix(cond map[string]any) string {
	if cond == nil {
		return ""
	}
	if msg, _ := cond["message"].(string); msg != "" {
		return ": " + msg
	}
	return ""
}

// Unreachable says why a worker's pods cannot be read. Its message names the object that could
// not be read and why, never what a Secret holds.
type Unreachable struct {
	Worker string
	Reason string
	// Err is the API's error when there is one (forbidden, not found), for exit codes.
	Err error
}

func (e *Unreachable) Error() string { return e.Reason }
func (e *Unreachable) Unwrap() error { return e.Err }

// Resolver finds a dispatched TrainJob's worker and reads how to reach it, with the identity of
// Client: the user's, so the API server decides who may read the worker's kubeconfig.
type Resolver struct {
	Client client.Reader
	// KueueNamespace holds the kubeconfig Secrets; DefaultKueueNamespace when empty.
	KueueNamespace string
}

func (r *Resolver) namespace() string {
	if r.KueueNamespace == "" {
		return DefaultKueueNamespace
	}
	return r.KueueNamespace
}

// Workload reads the manager's Workload of tj, nil when there is none. Several (a re-created
// workload) are told apart by creation, the newest first.
func (r *Resolver) Workload(ctx context.Context, tj *trainer.TrainJob) (*unstructured.Unstructured, error) {
	list := &unstructured.UnstructuredList{}
	list.SetGroupVersionKind(trainjob.WorkloadListGVK)
	if err := r.Client.List(ctx, list, client.InNamespace(tj.Namespace),
		client.MatchingLabels{trainjob.WorkloadJobUIDLabel: string(tj.UID)}); err != nil {
		return nil, err
	}
	return Newest(list.Items), nil
}

// Newest is the newest of a job's Workloads, nil when there is none.
func Newest(items []unstructured.Unstructured) *unstructured.Unstructured {
	if len(items) == 0 {
		return nil
	}
	newest := &items[0]
	for i := range items[1:] {
		if t, n := items[i+1].GetCreationTimestamp(), newest.GetCreationTimestamp(); n.Before(&t) {
			newest = &items[i+1]
		}
	}
	return newest
}

// Resolve reads where tj runs: its placement, and the worker's config when the placement has a
// worker and this identity may read its kubeconfig (else PodsHidden says why). Nil for a job
// MultiKueue does not dispatch.
func (r *Resolver) Resolve(ctx context.Context, tj *trainer.TrainJob) (*Placement, *rest.Config) {
	if !trainjob.DispatchedByMultiKueue(tj) {
		return nil, nil
	}
	wl, err := r.Workload(ctx, tj)
	if err != nil {
		p := &Placement{Waiting: "cannot read its Kueue Workload: " + Short(err)}
		return p, nil
	}
	p := PlacementOf(wl)
	return r.Reach(ctx, &p)
}

// Reach reads the worker's config of a placement (nil, PodsHidden set, when it cannot).
func (r *Resolver) Reach(ctx context.Context, p *Placement) (*Placement, *rest.Config) {
	if !p.Dispatched() {
		return p, nil
	}
	cfg, err := r.Connect(ctx, p.Worker)
	if err != nil {
		p.PodsHidden = err.Error()
		return p, nil
	}
	return p, cfg
}

// Connect reads the MultiKueueCluster worker and its kubeconfig Secret and returns the config
// of the worker cluster. The error is an *Unreachable.
func (r *Resolver) Connect(ctx context.Context, worker string) (*rest.Config, error) {
	fail := func(err error, format string, args ...any) error {
		return &Unreachable{Worker: worker, Reason: fmt.Sprintf(format, args...), Err: err}
	}
	mkc := &unstructured.Unstructured{}
	mkc.SetGroupVersionKind(ClusterGVK)
	if err := r.Client.Get(ctx, client.ObjectKey{Name: worker}, mkc); err != nil {
		return nil, fail(err, "cannot read MultiKueueCluster %s: %s", worker, Short(err))
	}
	src, _, _ := unstructured.NestedMap(mkc.Object, "spec", "clusterSource")
	if ref, _, _ := unstructured.NestedString(src, "clusterProfileRef", "name"); ref != "" {
		return nil, fail(nil, "MultiKueueCluster %s is reached through ClusterProfile %s, which Gantry does not read", worker, ref)
	}
	loc, _, _ := unstructured.NestedString(src, "kubeConfig", "location")
	locType, _, _ := unstructured.NestedString(src, "kubeConfig", "locationType")
	switch {
	case loc == "":
		return nil, fail(nil, "MultiKueueCluster %s names no kubeconfig (spec.clusterSource.kubeConfig)", worker)
	case locType != "" && locType != "Secret":
		return nil, fail(nil, "MultiKueueCluster %s's kubeconfig is a file of Kueue's controller (locationType %s), not readable here", worker, locType)
	}
	ns := r.namespace()
	sec := &corev1.Secret{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: loc}, sec); err != nil {
		return nil, fail(err, "cannot read Secret %s/%s: %s", ns, loc, Short(err))
	}
	data, ok := sec.Data[KubeconfigKey]
	if !ok {
		return nil, fail(nil, "Secret %s/%s has no key %q", ns, loc, KubeconfigKey)
	}
	cfg, err := ConfigFrom(data)
	if err != nil {
		return nil, fail(nil, "Secret %s/%s: %v", ns, loc, err)
	}
	return cfg, nil
}

// Short is an API error as a few words: "forbidden", "not found", else the error itself.
func Short(err error) string {
	switch {
	case apierrors.IsForbidden(err):
		return "forbidden"
	case apierrors.IsUnauthorized(err):
		return "unauthorized"
	case apierrors.IsNotFound(err):
		return "not found"
	case meta.IsNoMatchError(err):
		return "Kueue's v1beta2 API is not served"
	}
	return err.Error()
}

// ConfigFrom builds a worker's config from a MultiKueue kubeconfig, refusing what would make
// this process read local files or run programs on the say-so of a Secret: exec and auth
// provider plugins, token, certificate and CA files. (Kueue refuses most of these too.) Its
// errors never quote the kubeconfig.
func ConfigFrom(data []byte) (*rest.Config, error) {
	if len(data) > MaxKubeconfigBytes {
		return nil, fmt.Errorf("key %q holds %d bytes, more than a kubeconfig's %d", KubeconfigKey, len(data), MaxKubeconfigBytes)
	}
	kc, err := clientcmd.Load(data)
	if err != nil {
		return nil, fmt.Errorf("key %q is not a kubeconfig", KubeconfigKey)
	}
	if kc.CurrentContext == "" || kc.Contexts[kc.CurrentContext] == nil {
		return nil, fmt.Errorf("key %q: the kubeconfig has no current context", KubeconfigKey)
	}
	for name, c := range kc.Clusters {
		switch {
		case c.CertificateAuthority != "":
			return nil, fmt.Errorf("key %q: cluster %s names a CA file, not data", KubeconfigKey, name)
		case c.InsecureSkipTLSVerify:
			return nil, fmt.Errorf("key %q: cluster %s skips TLS verification", KubeconfigKey, name)
		}
	}
	for name, a := range kc.AuthInfos {
		switch {
		case a.Exec != nil:
			return nil, fmt.Errorf("key %q: user %s runs an exec plugin", KubeconfigKey, name)
		case a.AuthProvider != nil:
			return nil, fmt.Errorf("key %q: user %s uses an auth provider plugin", KubeconfigKey, name)
		case a.TokenFile != "", a.ClientCertificate != "", a.ClientKey != "":
			return nil, fmt.Errorf("key %q: user %s names a file, not data", KubeconfigKey, name)
		case a.Username != "" || a.Password != "":
			return nil, fmt.Errorf("key %q: user %s uses basic auth", KubeconfigKey, name)
		}
	}
	cfg, err := clientcmd.NewDefaultClientConfig(*kc, &clientcmd.ConfigOverrides{}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("key %q is not a usable kubeconfig", KubeconfigKey)
	}
	cfg.UserAgent = "gantry (MultiKueue worker)"
	return cfg, nil
}
