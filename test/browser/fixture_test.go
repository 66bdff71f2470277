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

package browser

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/ui"
	"github.com/gantry-ml/gantry/test/integration/framework"
)

type fixture struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
	ns  string
}

func (f *fixture) must(err error) {
	f.t.Helper()
	if err != nil {
		f.t.Fatal(err)
	}
}

func runtimeOf(name string, deprecated bool) *trainer.ClusterTrainingRuntime {
	labels := map[string]string{trainer.FrameworkLabel: "torch"}
	if deprecated {
		labels[trainer.SupportLabel] = trainer.SupportDeprecated
	}
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](2), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobset.JobSetSpec{ReplicatedJobs: []jobset.ReplicatedJob{{
				Name: "node", Replicas: 1,
				Template: batchv1.JobTemplateSpec{Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyOnFailure,
					Containers: []corev1.Container{{Name: "node", Image: "pytorch/pytorch:2.7.1", Resources: corev1.ResourceRequirements{
						Limits: corev1.ResourceList{"nvidia.com/gpu": *resourceQuantity(4)}}}},
				}}}},
			}}}},
		},
	}
}

// trainingRuntimeOf is runtimeOf's runtime as a TrainingRuntime of namespace ns.
func trainingRuntimeOf(ns, name string) *trainer.TrainingRuntime {
	return &trainer.TrainingRuntime{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: runtimeOf(name, false).Spec}
}

// kinds are the fixture's jobs: 25 in seven states, as `kubectl gantry list` derives them.
var kinds = []struct {
	state string
	count int
}{{"Created", 4}, {"Running", 5}, {"Restarting", 2}, {"Complete", 4}, {"Failed", 3}, {"Suspended", 3}, {"Queued", 4}}

func (f *fixture) create(fwk *framework.Framework) expectation {
	f.ns = "team-a"
	exp := expectation{Namespace: f.ns, ToComplete: "running-1", ProgressJob: "running-2", LogJob: "running-3", SpamJob: "running-4",
		UserNamespace: "user-a", ScaleNamespace: "scale", ScaleJobs: 1000,
		Runtimes: map[string]runtimeUsage{"browser-torch": {}, "browser-old": {Deprecated: true}, "browser-spare": {}}}
	for _, ns := range []string{f.ns, exp.UserNamespace, exp.ScaleNamespace} {
		f.must(f.c.Create(f.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}))
	}
	for name, u := range exp.Runtimes {
		f.must(f.c.Create(f.ctx, runtimeOf(name, u.Deprecated)))
	}
	n := 0
	for _, k := range kinds {
		for i := 1; i <= k.count; i++ {
			rt := "browser-torch"
			if n%5 == 4 {
				rt = "browser-old"
			}
			n++
			u := exp.Runtimes[rt]
			u.Jobs++
			exp.Runtimes[rt] = u
			f.job(fmt.Sprintf("%s-%d", strings.ToLower(k.state), i), rt, k.state)
		}
	}
	exp.LogPods = map[string]string{"node-0": "running-3-node-0-0-aaaaa", "node-1": "running-3-node-0-1-bbbbb"}
	for step, pod := range exp.LogPods {
		f.pod(exp.LogJob, pod, step[len("node-"):])
	}
	f.must(f.c.Create(f.ctx, &corev1.Event{
		ObjectMeta:     metav1.ObjectMeta{Namespace: f.ns, Name: "running-3-failed"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Namespace: f.ns, Name: exp.LogPods["node-1"]},
		Type:           corev1.EventTypeWarning, Reason: "Failed", Message: "Error: container node exited with code 1",
		LastTimestamp: metav1.NewTime(time.Now().Add(-3 * time.Minute)),
	}))
	// A TrainingRuntime of the namespace alice reads, and one of a namespace she does not: the
	// UI names the first to her, never the second (nor the ClusterTrainingRuntimes, which she
	// may not list here).
	exp.UserRuntimes = []string{"user-a-tuned"}
	f.must(f.c.Create(f.ctx, trainingRuntimeOf(exp.UserNamespace, "user-a-tuned")))
	f.must(f.c.Create(f.ctx, trainingRuntimeOf(f.ns, "team-a-private")))
	f.reader(exp.UserNamespace, "alice")
	f.scale(exp.ScaleNamespace, exp.ScaleJobs)
	exp.Optimization = f.optimization()
	kubeconfig, err := fwk.WriteKubeconfig(f.t.TempDir())
	f.must(err)
	exp.States = listStates(f.t, kubeconfig, f.ns)
	return exp
}

func (f *fixture) job(name, rt, state string) {
	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name},
		Spec:       trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: rt}},
	}
	switch state {
	case "Suspended":
		tj.Spec.Suspend = ptr.To(true)
	case "Queued":
		tj.Spec.Suspend = ptr.To(true)
		tj.Labels = map[string]string{"kueue.x-k8s.io/queue-name": "team-a"}
	}
	f.must(f.c.Create(f.ctx, tj))
	count := func(active, ready, failed int32) []trainer.JobStatus {
		return []trainer.JobStatus{{Name: "node", Active: &active, Ready: &ready, Failed: &failed, Succeeded: ptr.To[int32](0), Suspended: ptr.To[int32](0)}}
	}
	cond := func(t, msg string) []metav1.Condition {
		return []metav1.Condition{{Type: t, Status: metav1.ConditionTrue, Reason: t, Message: msg, LastTransitionTime: metav1.Now()}}
	}
	switch state {
	case "Running":
		tj.Status.JobsStatus = count(1, 1, 0)
	case "Restarting":
		tj.Status.JobsStatus = count(0, 0, 1)
	case "Complete":
		tj.Status.Conditions = cond("Complete", "jobset completed successfully")
	case "Failed":
		tj.Status.Conditions = cond("Failed", "jobset failed: node-0 reached its backoff limit")
	default:
		return
	}
	f.must(f.c.Status().Update(f.ctx, tj))
}

func (f *fixture) pod(job, name, index string) {
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: f.ns, Name: name, Labels: map[string]string{
			jobset.JobSetNameKey: job, jobset.ReplicatedJobNameKey: "node", jobset.JobIndexKey: "0",
			batchv1.JobCompletionIndexAnnotation: index}},
		Spec: corev1.PodSpec{NodeName: "gpu-" + index, Containers: []corev1.Container{{Name: "node", Image: "x"}}},
	}
	f.must(f.c.Create(f.ctx, p))
	p.Status = corev1.PodStatus{Phase: corev1.PodRunning, StartTime: ptr.To(metav1.Now())}
	f.must(f.c.Status().Update(f.ctx, p))
}

// reader binds service account name of ns to reading the jobs and runtimes of ns only.
func (f *fixture) reader(ns, name string) {
	f.must(f.c.Create(f.ctx, &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		Rules: []rbacv1.PolicyRule{{APIGroups: []string{"trainer.kubeflow.org"}, Resources: []string{"trainjobs", "trainingruntimes"},
			Verbs: []string{"get", "list", "watch"}}},
	}))
	f.must(f.c.Create(f.ctx, &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "reader"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "reader"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Namespace: ns, Name: name}},
	}))
}

func (f *fixture) scale(ns string, n int) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var firstErr error
	jobs := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range jobs {
				tj := &trainer.TrainJob{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("job-%04d", i)},
					Spec: trainer.TrainJobSpec{RuntimeRef: trainer.RuntimeRef{Name: "browser-spare-absent"}}}
				if err := f.c.Create(f.ctx, tj); err != nil {
					mu.Lock()
					firstErr = err
					mu.Unlock()
				}
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	f.must(firstErr)
}

// fakeLogs serves pod logs from lines the control endpoint appends (the API server here has no
// kubelet); events come from the API server.
type fakeLogs struct {
	ui.ClientsetOpener
	mu      sync.Mutex
	lines   map[string][]string
	changed chan struct{}
}

func newFakeLogs(events ui.ClientsetOpener) *fakeLogs {
	return &fakeLogs{ClientsetOpener: events, lines: map[string][]string{}, changed: make(chan struct{})}
}

func (l *fakeLogs) append(pod, line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines[pod] = append(l.lines[pod], line)
	close(l.changed)
	l.changed = make(chan struct{})
}

// Logs streams a pod's lines and, with follow, the ones appended later, until ctx ends.
func (l *fakeLogs) Logs(ctx context.Context, _, pod, _ string, opts *corev1.PodLogOptions) (io.ReadCloser, error) {
	pr, pw := io.Pipe()
	go func() {
		sent := 0
		for {
			l.mu.Lock()
			lines, ch := l.lines[pod], l.changed
			l.mu.Unlock()
			for ; sent < len(lines); sent++ {
				if _, err := io.WriteString(pw, lines[sent]+"\n"); err != nil {
					return
				}
			}
			if !opts.Follow {
				_ = pw.Close()
				return
			}
			select {
			case <-ch:
			case <-ctx.Done():
				_ = pw.CloseWithError(ctx.Err())
				return
			}
		}
	}()
	return pr, nil
}

func resourceQuantity(n int64) *resource.Quantity { return resource.NewQuantity(n, resource.DecimalSI) }
