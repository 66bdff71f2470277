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

package multicluster

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	gscheme "github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

const secretToken = "s3cr3t-token-never-printed"

// Kubeconfig is a MultiKueue kubeconfig of a worker at server, with a token; extra is added
// under the user.
func Kubeconfig(server, extra string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: worker
  cluster:
    server: ` + server + `
    certificate-authority-data: ` + "bm90IGEgcmVhbCBDQQ==" + `
users:
- name: kueue
  user:
    token: ` + secretToken + extra + `
contexts:
- name: worker
  context: {cluster: worker, user: kueue}
current-context: worker
`
}

func dispatchedJob() *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bert", UID: "uid-1"},
		Spec:       trainer.TrainJobSpec{ManagedBy: ptr.To(trainer.ManagedByMultiKueue)},
	}
}

// workload is the manager's Workload of dispatchedJob with the given status.
func workload(status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"status": status}}
	u.SetGroupVersionKind(trainjob.WorkloadGVK)
	u.SetNamespace("default")
	u.SetName("trainjob-bert-abcde")
	u.SetLabels(map[string]string{trainjob.WorkloadJobUIDLabel: "uid-1"})
	return u
}

func cond(typ, status, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "R", "message": msg, "lastTransitionTime": "2026-01-01T00:00:00Z"}
}

func dispatchedTo(worker string) *unstructured.Unstructured {
	return workload(map[string]any{"clusterName": worker, "conditions": []any{cond("QuotaReserved", "True", ""), cond("Admitted", "True", "")}})
}

// cluster is the MultiKueueCluster worker1, reached through source.
func cluster(source map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterSource": source}}}
	u.SetGroupVersionKind(ClusterGVK)
	u.SetName("worker1")
	return u
}

func secretSource(name string) map[string]any {
	return map[string]any{"kubeConfig": map[string]any{"locationType": "Secret", "location": name}}
}

func secret(ns, name, key, data string) *corev1.Secret {
	return &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string][]byte{key: []byte(data)}}
}

func forbidGets(gk schema.GroupKind) interceptor.Funcs {
	return interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
		gvk, _ := c.GroupVersionKindFor(obj)
		if gvk.GroupKind() == gk {
			return apierrors.NewForbidden(schema.GroupResource{Group: gk.Group, Resource: strings.ToLower(gk.Kind) + "s"}, key.Name, errors.New("RBAC says no"))
		}
		return c.Get(ctx, key, obj, opts...)
	}}
}

func TestResolve(t *testing.T) {
	good := []client.Object{dispatchedTo("worker1"), cluster(secretSource("worker1-kubeconfig")),
		secret("kueue-system", "worker1-kubeconfig", KubeconfigKey, Kubeconfig("https://worker1.invalid:6443", ""))}
	type outcome struct {
		Placement *Placement
		Host      string
	}
	cases := map[string]struct {
		job       *trainer.TrainJob
		objs      []client.Object
		funcs     interceptor.Funcs
		namespace string
		want      outcome
	}{
		"a job MultiKueue does not run": {
			job:  &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bert", UID: "uid-1"}},
			objs: good,
			want: outcome{},
		},
		"dispatched, and the worker's kubeconfig readable": {
			objs: good,
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1"}, Host: "https://worker1.invalid:6443"},
		},
		"the Secret in another Kueue namespace": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(secretSource("wk")),
				secret("kueue", "wk", KubeconfigKey, Kubeconfig("https://worker1.invalid", ""))},
			namespace: "kueue",
			want:      outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1"}, Host: "https://worker1.invalid"},
		},
		"no Workload yet": {
			want: outcome{Placement: &Placement{Waiting: "Kueue has no Workload for it yet"}},
		},
		"waiting for quota": {
			objs: []client.Object{workload(map[string]any{"conditions": []any{cond("QuotaReserved", "False", "couldn't assign flavors to pod set node: insufficient quota")}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde",
				Waiting: "its Workload trainjob-bert-abcde waits for quota: couldn't assign flavors to pod set node: insufficient quota"}},
		},
		"MultiKueue trying workers": {
			objs: []client.Object{workload(map[string]any{"nominatedClusterNames": []any{"worker1", "worker2"},
				"conditions": []any{cond("QuotaReserved", "True", "")}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Nominated: []string{"worker1", "worker2"},
				Waiting: "MultiKueue is trying workers worker1, worker2"}},
		},
		"an admission check pending": {
			objs: []client.Object{workload(map[string]any{"conditions": []any{cond("QuotaReserved", "True", "")},
				"admissionChecks": []any{map[string]any{"name": "multikueue", "state": "Pending", "message": "no worker has room"}}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde",
				Waiting: "admission check multikueue is Pending: no worker has room"}},
		},
		"evicted": {
			objs: []client.Object{workload(map[string]any{"conditions": []any{cond("QuotaReserved", "False", ""),
				cond("Evicted", "True", "The workload was evicted: worker1 is not active")}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde",
				Waiting: "its Workload trainjob-bert-abcde was evicted: The workload was evicted: worker1 is not active"}},
		},
		"the Workloads forbidden": {
			objs: good,
			funcs: interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
				return apierrors.NewForbidden(schema.GroupResource{Group: "kueue.x-k8s.io", Resource: "workloads"}, "", errors.New("no"))
			}},
			want: outcome{Placement: &Placement{Waiting: "cannot read its Kueue Workload: forbidden"}},
		},
		"the Secret forbidden": {
			objs:  good,
			funcs: forbidGets(schema.GroupKind{Kind: "Secret"}),
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: "cannot read Secret kueue-system/worker1-kubeconfig: forbidden"}},
		},
		"the MultiKueueCluster forbidden": {
			objs:  good,
			funcs: forbidGets(ClusterGVK.GroupKind()),
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: "cannot read MultiKueueCluster worker1: forbidden"}},
		},
		"the worker's MultiKueueCluster missing": {
			objs: []client.Object{dispatchedTo("worker3")},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker3",
				PodsHidden: "cannot read MultiKueueCluster worker3: not found"}},
		},
		"the Secret missing": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(secretSource("worker1-kubeconfig"))},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: "cannot read Secret kueue-system/worker1-kubeconfig: not found"}},
		},
		"the Secret without the key": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(secretSource("worker1-kubeconfig")),
				secret("kueue-system", "worker1-kubeconfig", "config", Kubeconfig("https://worker1.invalid", ""))},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: `Secret kueue-system/worker1-kubeconfig has no key "kubeconfig"`}},
		},
		"the Secret malformed": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(secretSource("worker1-kubeconfig")),
				secret("kueue-system", "worker1-kubeconfig", KubeconfigKey, "token: "+secretToken+"\n\t{{")},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: `Secret kueue-system/worker1-kubeconfig: key "kubeconfig" is not a kubeconfig`}},
		},
		"an exec plugin refused": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(secretSource("worker1-kubeconfig")),
				secret("kueue-system", "worker1-kubeconfig", KubeconfigKey, Kubeconfig("https://worker1.invalid", "\n    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh}"))},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: `Secret kueue-system/worker1-kubeconfig: key "kubeconfig": user kueue runs an exec plugin`}},
		},
		"a kubeconfig file of Kueue's controller": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(map[string]any{"kubeConfig": map[string]any{"locationType": "Path", "location": "/etc/multikueue/kubeconfigs/worker1"}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: "MultiKueueCluster worker1's kubeconfig is a file of Kueue's controller (locationType Path), not readable here"}},
		},
		"a ClusterProfile": {
			objs: []client.Object{dispatchedTo("worker1"), cluster(map[string]any{"clusterProfileRef": map[string]any{"name": "gke-1"}})},
			want: outcome{Placement: &Placement{Workload: "trainjob-bert-abcde", Worker: "worker1",
				PodsHidden: "MultiKueueCluster worker1 is reached through ClusterProfile gke-1, which Gantry does not read"}},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			s, err := gscheme.New()
			if err != nil {
				t.Fatal(err)
			}
			c := fake.NewClientBuilder().WithScheme(s).WithObjects(tc.objs...).WithInterceptorFuncs(tc.funcs).Build()
			job := tc.job
			if job == nil {
				job = dispatchedJob()
			}
			r := &Resolver{Client: c, KueueNamespace: tc.namespace}
			p, cfg := r.Resolve(context.Background(), job)
			got := outcome{Placement: p}
			if cfg != nil {
				got.Host = cfg.Host
				if cfg.BearerToken != secretToken {
					t.Errorf("the worker's config has not the kubeconfig's token")
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("placement (-want,+got):\n%s", diff)
			}
			if p != nil && strings.Contains(p.PodsHidden+p.Waiting, secretToken) {
				t.Errorf("the placement quotes the kubeconfig: %+v", p)
			}
		})
	}
}

func TestConfigFrom(t *testing.T) {
	cases := map[string]struct {
		data    string
		wantErr string
	}{
		"a token":          {data: Kubeconfig("https://w.invalid", "")},
		"too big":          {data: Kubeconfig("https://w.invalid", "\n    # "+strings.Repeat("x", MaxKubeconfigBytes)), wantErr: `key "kubeconfig" holds 262`},
		"no context":       {data: strings.Replace(Kubeconfig("https://w.invalid", ""), "current-context: worker", "", 1), wantErr: `key "kubeconfig": the kubeconfig has no current context`},
		"a token file":     {data: Kubeconfig("https://w.invalid", "\n    tokenFile: /var/run/secrets/token"), wantErr: `key "kubeconfig": user kueue names a file, not data`},
		"a client key":     {data: Kubeconfig("https://w.invalid", "\n    client-key: /home/me/.ssh/id_rsa"), wantErr: `key "kubeconfig": user kueue names a file, not data`},
		"an auth plugin":   {data: Kubeconfig("https://w.invalid", "\n    auth-provider: {name: oidc}"), wantErr: `key "kubeconfig": user kueue uses an auth provider plugin`},
		"basic auth":       {data: Kubeconfig("https://w.invalid", "\n    username: admin"), wantErr: `key "kubeconfig": user kueue uses basic auth`},
		"a CA file":        {data: strings.Replace(Kubeconfig("https://w.invalid", ""), "certificate-authority-data: bm90IGEgcmVhbCBDQQ==", "certificate-authority: /etc/ca.crt", 1), wantErr: `key "kubeconfig": cluster worker names a CA file, not data`},
		"no TLS checks":    {data: strings.Replace(Kubeconfig("https://w.invalid", ""), "certificate-authority-data: bm90IGEgcmVhbCBDQQ==", "insecure-skip-tls-verify: true", 1), wantErr: `key "kubeconfig": cluster worker skips TLS verification`},
		"not a kubeconfig": {data: "\x00\x01" + secretToken, wantErr: `key "kubeconfig" is not a kubeconfig`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ConfigFrom([]byte(tc.data))
			got := ""
			if err != nil {
				got = err.Error()
				if strings.Contains(got, secretToken) {
					t.Fatalf("the error quotes the kubeconfig: %v", err)
				}
			}
			if tc.wantErr == "" && got != "" || !strings.HasPrefix(got, tc.wantErr) {
				t.Errorf("error %q, want one starting %q", got, tc.wantErr)
			}
		})
	}
}
