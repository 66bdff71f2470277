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

package cli

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// workerToken is the token of the worker kubeconfigs: no output may quote it.
const workerToken = "worker-token-never-printed"

// workerKubeconfig is a MultiKueue kubeconfig Secret's content for the worker at server.
func workerKubeconfig(server string) string {
	return `apiVersion: v1
kind: Config
clusters:
- name: worker
  cluster: {server: "` + server + `", certificate-authority-data: bm90IGEgcmVhbCBDQQ==}
users:
- name: kueue
  user: {token: ` + workerToken + `}
contexts:
- name: worker
  context: {cluster: worker, user: kueue}
current-context: worker
`
}

// mkJob is a TrainJob of the manager cluster MultiKueue runs.
func mkJob(name string) *trainer.TrainJob {
	tj := utiltesting.MakeTrainJobWrapper("default", name).RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		ManagedBy(trainer.ManagedByMultiKueue).Label(trainjob.QueueLabel, "team-a").Created(testCreated).Obj()
	tj.UID = types.UID("uid-" + name)
	return tj
}

// mkWorkload is the manager's Workload of job with the given status.
func mkWorkload(job string, status map[string]any) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"active": true}, "status": status}}
	u.SetGroupVersionKind(trainjob.WorkloadGVK)
	u.SetNamespace("default")
	u.SetName("trainjob-" + job + "-1a2b3")
	u.SetLabels(map[string]string{trainjob.WorkloadJobUIDLabel: "uid-" + job})
	return u
}

func wlCondition(typ, status, msg string) map[string]any {
	return map[string]any{"type": typ, "status": status, "reason": "R", "message": msg, "lastTransitionTime": "2026-01-01T11:00:00Z"}
}

// mkCluster is a MultiKueueCluster with its kubeconfig Secret, worker's server in it.
func mkCluster(name, server string) []client.Object {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"clusterSource": map[string]any{
		"kubeConfig": map[string]any{"locationType": "Secret", "location": name + "-kubeconfig"}}}}}
	u.SetGroupVersionKind(multicluster.ClusterGVK)
	u.SetName(name)
	sec := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: multicluster.DefaultKueueNamespace, Name: name + "-kubeconfig"},
		Data: map[string][]byte{multicluster.KubeconfigKey: []byte(workerKubeconfig(server))}}
	return []client.Object{u, sec}
}

// multiKueueCluster is a manager cluster: bert runs on worker1, whose kubeconfig this user
// may read; hidden runs on worker2, whose Secret is forbidden; queued waits for quota.
func multiKueueCluster() fixture {
	bert := mkJob("bert")
	bert.Status.JobsStatus = []trainer.JobStatus{runningNodes()}
	hidden := mkJob("hidden")
	hidden.Status.JobsStatus = []trainer.JobStatus{runningNodes()}
	queued := mkJob("queued")
	queued.Spec.Suspend = new(true)
	dispatched := func(worker string) map[string]any {
		return map[string]any{"clusterName": worker, "admission": map[string]any{"clusterQueue": "cq"},
			"conditions": []any{wlCondition("QuotaReserved", "True", ""), wlCondition("Admitted", "True", "")}}
	}
	objs := []client.Object{torchRuntime(), bert, hidden, queued,
		mkWorkload("bert", dispatched("worker1")), mkWorkload("hidden", dispatched("worker2")),
		mkWorkload("queued", map[string]any{"conditions": []any{
			wlCondition("QuotaReserved", "False", "couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed")}}),
		event("TrainJob", "bert", "CreatedWorkload", "Created Workload: default/trainjob-bert-1a2b3", 89*time.Minute),
	}
	objs = append(objs, mkCluster("worker1", "https://worker1.invalid:6443")...)
	objs = append(objs, mkCluster("worker2", "https://worker2.invalid:6443")...)
	worker1 := fixture{
		objs: []client.Object{event("Pod", "bert-node-0-0-abcde", "Started", "Started container node", 88*time.Minute)},
		pods: []*corev1.Pod{bertPod(0), bertPod(1)},
	}
	return fixture{objs: objs, workers: map[string]fixture{"https://worker1.invalid:6443": worker1},
		funcs: interceptor.Funcs{Get: func(ctx context.Context, c client.WithWatch, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
			if _, ok := obj.(*corev1.Secret); ok && key.Name == "worker2-kubeconfig" {
				return apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, key.Name,
					errors.New(`User "alice" cannot get resource "secrets" in API group "" in the namespace "kueue-system"`))
			}
			return c.Get(ctx, key, obj, opts...)
		}}}
}

func TestMultiKueue(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"get: the worker and its pods": {
			args: []string{"get", "bert"},
			want: result{Stdout: `Name:        bert
Namespace:   default
State:       Running
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Queue:       team-a
Worker:      worker1 (MultiKueue)
Created:     2026-01-01T10:30:00Z (90m ago)

Steps (on worker worker1):
  STEP     POD                   PHASE     RESTARTS   NODE    DEVICES   STARTED
  node-0   bert-node-0-0-abcde   Running   0          gpu-1   4         89m ago
  node-1   bert-node-0-1-abcde   Running   0          gpu-1   4         89m ago

Conditions:
  <none>

Events:
  AGE   TYPE     REASON            OBJECT                    MESSAGE
  89m   Normal   CreatedWorkload   trainjob/bert             Created Workload: default/trainjob-bert-1a2b3
  88m   Normal   Started           pod/bert-node-0-0-abcde   Started container node
`},
		},
		"get: the worker's kubeconfig forbidden, said once": {
			args: []string{"get", "hidden"},
			want: result{Stdout: `Name:        hidden
Namespace:   default
State:       Running
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Queue:       team-a
Worker:      worker2 (its pods are not shown: cannot read Secret kueue-system/worker2-kubeconfig: forbidden)
Created:     2026-01-01T10:30:00Z (90m ago)

Steps (on worker worker2):
  <not shown>

Conditions:
  <none>

Events:
  <none>
`},
		},
		"get: not dispatched yet, Kueue's state": {
			args: []string{"get", "queued"},
			want: result{Stdout: `Name:        queued
Namespace:   default
State:       Queued
Message:     couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Queue:       team-a (workload trainjob-queued-1a2b3)
Worker:      none yet (its Workload trainjob-queued-1a2b3 waits for quota: couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed)
Created:     2026-01-01T10:30:00Z (90m ago)

Steps:
  <none>

Conditions:
  <none>

Events:
  <none>
`},
		},
		"get: another Kueue namespace has no such Secret": {
			args: []string{"get", "bert", "--kueue-namespace", "kueue", "-o", "jsonpath={.multiKueue}"},
			want: result{Stdout: `{"podsHidden":"cannot read Secret kueue/worker1-kubeconfig: not found","worker":"worker1","workload":"trainjob-bert-1a2b3"}`},
		},
		"get -o jsonpath: the worker": {
			args: []string{"get", "bert", "-o", "jsonpath={.multiKueue.worker} {.steps[*].pod}"},
			want: result{Stdout: "worker1 bert-node-0-0-abcde bert-node-0-1-abcde"},
		},
		"list -o wide: the worker in MESSAGE": {
			args: []string{"list", "-o", "wide"},
			want: result{Stdout: `NAME     STATE     RUNTIME             NODES   GPUS   PROGRESS   ETA   AGE   QUEUE    RESTARTS   MESSAGE
bert     Running   torch-distributed   2       4      -          -     90m   team-a   0          on worker worker1
hidden   Running   torch-distributed   2       4      -          -     90m   team-a   0          on worker worker2
queued   Queued    torch-distributed   2       4      -          -     90m   team-a   0          couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed
`},
		},
		"logs: read on the worker": {
			args: []string{"logs", "bert", "--all"},
			want: result{Stdout: "[node-0] fake logs\n[node-1] fake logs\n"},
		},
		"logs: the worker's kubeconfig forbidden: 5": {
			args: []string{"logs", "hidden"},
			want: failed(ExitForbidden, "TrainJob hidden runs on worker worker2 (MultiKueue); its logs cannot be read there: cannot read Secret kueue-system/worker2-kubeconfig: forbidden"),
		},
		"logs: not dispatched yet: 4": {
			args: []string{"logs", "queued"},
			want: failed(ExitNotFound, "TrainJob queued is not on a worker yet: its Workload trainjob-queued-1a2b3 waits for quota: couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed; use -f to wait for it"),
		},
		"logs -f: never dispatched: 3": {
			args: []string{"logs", "queued", "-f", "--pod-timeout", "10ms"},
			want: failed(ExitTimeout, "TrainJob queued was not dispatched to a worker within 10ms: its Workload trainjob-queued-1a2b3 waits for quota: couldn't assign flavors to pod set node: insufficient unused quota for nvidia.com/gpu in flavor gpu, 8 more needed"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := multiKueueCluster().run(t, tc.args...)
			checkResult(t, tc.want, got)
			if strings.Contains(got.Stdout+got.Stderr, workerToken) {
				t.Errorf("the output quotes the worker's kubeconfig")
			}
		})
	}
}

// A worker that cannot be reached leaves its pods out, saying why.
func TestMultiKueueWorkerUnreachable(t *testing.T) {
	f := multiKueueCluster()
	down := &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "worker1.invalid"}}
	f.workers = map[string]fixture{"https://worker1.invalid:6443": {funcs: interceptor.Funcs{
		List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error { return down },
	}}}
	got := f.run(t, "get", "bert", "-o", "jsonpath={.multiKueue.podsHidden}")
	checkResult(t, result{Stdout: "cannot list pods on worker worker1: dial tcp: lookup worker1.invalid: no such host"}, got)
	got = f.run(t, "logs", "bert")
	checkResult(t, failed(ExitUnreachable, "TrainJob bert runs on worker worker1 (MultiKueue): dial tcp: lookup worker1.invalid: no such host"), got)
}
