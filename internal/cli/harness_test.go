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
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	kfake "k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	gscheme "github.com/gantry-ml/gantry/internal/scheme"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// The verbs' unit tests run the whole command line in-process, as the binary does, against
// controller-runtime's fake client and client-go's fake clientset: flags, output and exit code.

// testNow is the clock of every AGE column; the objects are made an hour and a half earlier.
var (
	testNow     = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	testCreated = testNow.Add(-90 * time.Minute)
)

// fakeServer is the API server the flags name: never dialled, the clients are fakes.
const fakeServer = "https://cluster.invalid"

// fixture is the cluster a command line runs against.
type fixture struct {
	objs []client.Object
	// pods are served by the clientset too, for their logs.
	pods []*corev1.Pod
	// funcs intercept the fake client's calls, e.g. to feed a watch.
	funcs interceptor.Funcs
	stdin string
	// unreachable names a server that refuses connections instead of the fakes: a machine
	// without a cluster, whose kubectl default (localhost:8080) may be anything.
	unreachable bool
	// ctx is the command's context; nil is a background one.
	ctx context.Context
	// workers are the MultiKueue worker clusters a job of this one may run on, by the server
	// their kubeconfig names; another server cannot be reached.
	workers map[string]fixture
}

// result is what a command line did.
type result struct {
	Code   int
	Stdout string
	Stderr string
}

// run executes gantry ARGS as the binary does and returns its exit code and output.
func (f fixture) run(t *testing.T, args ...string) result {
	t.Helper()
	// No kubeconfig of the machine's leaks in: the namespace is "default" unless -n says.
	t.Setenv("KUBECONFIG", filepath.Join(t.TempDir(), "none"))
	var out, errOut bytes.Buffer
	o := NewOptions(strings.NewReader(f.stdin), &out, &errOut)
	o.Now = func() time.Time { return testNow }
	if f.unreachable {
		*o.ConfigFlags.APIServer = "https://127.0.0.1:1"
	} else {
		// The flags name a server, so the code paths that ask for a cluster find one.
		*o.ConfigFlags.APIServer = fakeServer
		c := f.client(t)
		var objs []runtime.Object
		for _, p := range f.pods {
			objs = append(objs, p.DeepCopy())
		}
		o.once.Do(func() {
			o.cfg = &rest.Config{Host: fakeServer}
			o.reader = &jobview.Reader{Client: c, Connect: f.connect(t)}
			o.clientset = kfake.NewClientset(objs...)
			o.installer = c
		})
	}
	root := NewRootCommand(o)
	if f.ctx != nil {
		root.SetContext(f.ctx)
	}
	code := Execute(o, root, args)
	return result{Code: code, Stdout: out.String(), Stderr: errOut.String()}
}

// connect makes the fake clients of the worker a kubeconfig names.
func (f fixture) connect(t *testing.T) jobview.Connector {
	return func(cfg *rest.Config) (*jobview.Reader, jobview.CoreClient, error) {
		w, ok := f.workers[cfg.Host]
		if !ok {
			return nil, nil, fmt.Errorf("dial tcp: lookup %s: no such host", cfg.Host)
		}
		var objs []runtime.Object
		for _, p := range w.pods {
			objs = append(objs, p.DeepCopy())
		}
		return &jobview.Reader{Client: w.client(t)}, kfake.NewClientset(objs...), nil
	}
}

func (f fixture) client(t *testing.T) client.WithWatch {
	t.Helper()
	s, err := gscheme.New()
	if err != nil {
		t.Fatal(err)
	}
	objs := append([]client.Object(nil), f.objs...)
	for _, p := range f.pods {
		objs = append(objs, p)
	}
	return fake.NewClientBuilder().WithScheme(s).WithRESTMapper(jobview.StaticMapper()).
		WithObjects(objs...).WithStatusSubresource(&trainer.TrainJob{}).
		WithInterceptorFuncs(f.funcs).Build()
}

// checkResult compares a result with the expected one, output in full.
func checkResult(t *testing.T, want, got result) {
	t.Helper()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("result (-want,+got):\n%s", diff)
	}
}

// usage is the result of a usage error: exit code 2 and one error line.
func usage(msg string) result {
	return result{Code: ExitUsage, Stderr: "error: " + msg + "\n"}
}

func failed(code int, msg string) result {
	return result{Code: code, Stderr: "error: " + msg + "\n"}
}

// Objects of the fake cluster.

func condition(typ, reason, msg string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: msg,
		LastTransitionTime: metav1.NewTime(testCreated.Add(time.Hour))}
}

// torchRuntime is a ClusterTrainingRuntime as the shipped ones: Torch, 2 nodes of 4 GPUs.
func torchRuntime() *trainer.ClusterTrainingRuntime {
	spec := utiltesting.MakeTrainingRuntimeSpecWrapper().NumNodes(2).Torch(&trainer.TorchMLPolicySource{}).Obj()
	node := utiltesting.Job(spec.Template.Spec.ReplicatedJobs, utiltesting.Node)
	node.Template.Spec.Template.Spec.Containers[0].Resources.Limits = corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI)}
	rt := utiltesting.MakeClusterTrainingRuntimeWrapper("torch-distributed").Spec(spec).
		Label(trainer.FrameworkLabel, "torch").Obj()
	rt.CreationTimestamp = metav1.NewTime(testCreated)
	return rt
}

// bert is a TrainJob of torch-distributed in "default" whose trainer runs.
func bert() *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper("default", "bert").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).JobsStatus(runningNodes()).Obj()
}

func completeJob(name string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper("default", name).RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).Condition(condition(trainer.TrainJobComplete, "Completed", "jobset completed successfully")).Obj()
}

func failedTrainJob(name string) *trainer.TrainJob {
	return utiltesting.MakeTrainJobWrapper("default", name).RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).Condition(condition(trainer.TrainJobFailed, "FailedJobs", "jobset failed: node-0 reached its backoff limit")).Obj()
}

// runningNodes is the replicated job "node" with its two Jobs active.
func runningNodes() trainer.JobStatus {
	return trainer.JobStatus{Name: "node", Active: ptr.To[int32](2), Ready: ptr.To[int32](2), Succeeded: ptr.To[int32](0),
		Failed: ptr.To[int32](0), Suspended: ptr.To[int32](0)}
}

// bertPod is the running pod of bert's step node-<index>.
func bertPod(index int) *corev1.Pod {
	const ns, job = "default", "bert"
	started := metav1.NewTime(testCreated.Add(time.Minute))
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: ns, Name: fmt.Sprintf("%s-node-0-%d-abcde", job, index), CreationTimestamp: metav1.NewTime(testCreated),
			Labels: map[string]string{
				jobset.JobSetNameKey: job, jobset.ReplicatedJobNameKey: "node", jobset.JobIndexKey: "0",
				batchv1.JobCompletionIndexAnnotation: strconv.Itoa(index), trainer.AncestorLabel: trainer.AncestorTrainer,
			},
		},
		Spec: corev1.PodSpec{NodeName: "gpu-1", Containers: []corev1.Container{{Name: "node", Image: "node:test",
			Resources: corev1.ResourceRequirements{Limits: corev1.ResourceList{"nvidia.com/gpu": *resource.NewQuantity(4, resource.DecimalSI)}}}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &started,
			ContainerStatuses: []corev1.ContainerStatus{{Name: "node", Ready: true,
				State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: started}}}}},
	}
}

// watchOf is an interceptor's Watch that serves events, then ends the watch; the command then
// lists again and watches on, so the second watch cancels the command's context.
func watchOf(cancel context.CancelFunc, events ...watch.Event) func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
	calls := 0
	return func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
		calls++
		w := watch.NewFakeWithChanSize(len(events), false)
		if calls > 1 {
			cancel()
			return w, nil
		}
		for _, ev := range events {
			w.Action(ev.Type, ev.Object)
		}
		w.Stop()
		return w, nil
	}
}

// writeFile writes a file in a directory of the test and returns its path.
func writeFile(t *testing.T, name, data string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// event is an event about an object of namespace "default", ago before testNow.
func event(kind, name, reason, msg string, ago time.Duration) *corev1.Event {
	const ns = "default"
	at := metav1.NewTime(testNow.Add(-ago))
	return &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("%s.%s.%d", name, strings.ToLower(reason), ago)},
		InvolvedObject: corev1.ObjectReference{Kind: kind, Namespace: ns, Name: name},
		Type:           corev1.EventTypeNormal, Reason: reason, Message: msg, FirstTimestamp: at, LastTimestamp: at,
	}
}

func diffText(want, got string) string { return cmp.Diff(want, got) }
