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

package reliability

import (
	"cmp"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/util/reachable"
)

const (
	manager = "gantry-manager"
	// The manager's leader election lease, as the local cluster configures it.
	leaseNamespace = "kubeflow-system"
	leaseName      = "trainer.kubeflow.org"
	// simManager owns the runtime patch that sets the simulated pods' exit code.
	simManager  = "reliability.gantry.dev/simulation"
	simExitCode = "sim.gantry.dev/exit-code"
)

// jobSpec is one TrainJob of a seed's plan.
type jobSpec struct {
	name     string
	runtime  string
	nodes    int32
	exitCode int
}

// plan is the seed's TrainJobs on the suite's torch runtime: one or two nodes, one in five
// failing.
func plan(seed int64, n int) []jobSpec {
	r := rand.New(rand.NewPCG(uint64(seed), 0))
	jobs := make([]jobSpec, n)
	for i := range jobs {
		jobs[i] = jobSpec{name: fmt.Sprintf("job-%04d", i), runtime: runtimeName, nodes: int32(1 + r.IntN(2))}
		if r.IntN(5) == 0 {
			jobs[i].exitCode = 3
		}
	}
	return jobs
}

func (j jobSpec) trainJob(ns string) *trainer.TrainJob {
	tj := &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: j.name},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: j.runtime, Kind: ptr.To(trainer.ClusterTrainingRuntimeKind)},
			Trainer:    &trainer.Trainer{NumNodes: ptr.To(j.nodes)},
		},
	}
	if j.exitCode != 0 {
		tj.Spec.RuntimePatches = []trainer.RuntimePatch{{Manager: simManager, TrainingRuntimeSpec: &trainer.TrainingRuntimeSpecPatch{
			Template: &trainer.JobSetTemplatePatch{Spec: &trainer.JobSetSpecPatch{ReplicatedJobs: []trainer.ReplicatedJobPatch{{
				Name: "node", Template: &trainer.JobTemplatePatch{Spec: &trainer.JobSpecPatch{Template: &trainer.PodTemplatePatch{
					Metadata: &metav1.ObjectMeta{Annotations: map[string]string{simExitCode: fmt.Sprint(j.exitCode)}},
				}}},
			}}}},
		}}}
	}
	return tj
}

// disruption says what breaks during a run.
type disruption struct {
	// killEvery kills the manager with SIGKILL every 3-7 s (seeded) and restarts it at once.
	killEvery bool
	// restartCrashed restarts the manager whenever it has died (as a kubelet would, without the
	// lease wait) until every TrainJob has finished: for a manager that crashes itself.
	restartCrashed bool
	// during runs while the TrainJobs are created, and says when the last disruption ended.
	during func(ctx context.Context, t *testing.T) time.Time
	// rate is the creates per second, cfg.rate when 0.
	rate float64
}

// result is what a run leaves for the invariants.
type result struct {
	ns        string
	seed      int64
	auditFrom int64
	history   *history
	kills     int
	lastKill  time.Time
	// crashes counts the restarts of a manager that had died by itself.
	crashes int
	// converged is how long after the last kill (or the last create) the manager had caught up
	// (waitConverged); finished, how long until every TrainJob had finished.
	converged time.Duration
	finished  time.Duration
}

// runScenario creates the TrainJobs in a new namespace while the faults happen, then waits
// until every TrainJob has finished.
func runScenario(t *testing.T, name string, seed int64, jobs []jobSpec, f disruption) *result {
	t.Helper()
	ctx := t.Context()
	ns := fmt.Sprintf("%s-%d-%d", name, seed, time.Now().Unix()%100000)
	if err := k8sClient.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
		t.Fatal(err)
	}
	res := &result{ns: ns, seed: seed, auditFrom: auditSize()}
	h, err := watchHistory(ctx, ns)
	if err != nil {
		t.Fatal(err)
	}
	res.history = h

	var crashes *supervisor
	if f.restartCrashed {
		crashes = supervise(ctx, t)
		defer crashes.stop()
	}
	chaosCtx, stopChaos := context.WithCancel(ctx)
	var chaos sync.WaitGroup
	// A failing create ends the test at once: the disruptions end with it.
	defer func() { stopChaos(); chaos.Wait() }()
	if f.killEvery {
		chaos.Go(func() { res.kills, res.lastKill = killLoop(chaosCtx, t, seed) })
	}
	if f.during != nil {
		chaos.Go(func() { res.lastKill = f.during(chaosCtx, t) })
	}
	start := time.Now()
	createAll(ctx, t, ns, jobs, cmp.Or(f.rate, cfg.rate))
	if f.killEvery {
		// The chaos lasts its full time even when the creates end first.
		select {
		case <-time.After(time.Until(start.Add(cfg.chaos))):
		case <-ctx.Done():
		}
		stopChaos()
	}
	chaos.Wait()
	stopChaos()
	if err := cluster.Restart(manager); err != nil {
		t.Fatal(err)
	}
	from := res.lastKill
	if from.IsZero() {
		from = time.Now()
	}
	res.converged = waitConverged(ctx, t, ns, from)
	res.finished = waitFinished(ctx, t, ns, len(jobs), from)
	if crashes != nil {
		res.crashes = crashes.stop()
	}
	return res
}

// supervisor restarts the manager whenever it has died, as a kubelet restarts a crashed
// container.
type supervisor struct {
	cancel   context.CancelFunc
	done     chan int
	once     sync.Once
	restarts int
}

// supervise starts a supervisor. The dead manager's lease is deleted before the restart: the
// lease wait (up to 15 s) is what R3 measures; here it would only slow the crashes down.
func supervise(ctx context.Context, t *testing.T) *supervisor {
	ctx, cancel := context.WithCancel(ctx)
	s := &supervisor{cancel: cancel, done: make(chan int, 1)}
	go func() {
		restarts := 0
		defer func() { s.done <- restarts }()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			if cluster.Alive(manager) {
				continue
			}
			// During a control-plane outage the lease cannot go: the restart then waits for it.
			if err := deleteLease(ctx); err != nil {
				t.Logf("the dead manager's lease stays: %v", err)
			}
			if err := cluster.Restart(manager); err != nil {
				t.Errorf("restart: %v", err)
				return
			}
			restarts++
		}
	}()
	return s
}

// stop ends supervision and returns how many restarts it made.
func (s *supervisor) stop() int {
	s.once.Do(func() {
		s.cancel()
		s.restarts = <-s.done
	})
	return s.restarts
}

// deleteLease deletes the manager's leader election lease.
func deleteLease(ctx context.Context) error {
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: leaseNamespace, Name: leaseName}}
	return client.IgnoreNotFound(k8sClient.Delete(ctx, lease))
}

// waitConverged waits until the manager has caught up: every TrainJob has its JobSet, and every
// finished JobSet's TrainJob says so. What remains is the cluster's work (pods to run), not
// Gantry's. It says how long after from that was.
func waitConverged(ctx context.Context, t *testing.T, ns string, from time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		lagging, err := lagging(ctx, ns)
		if err == nil && lagging == 0 {
			return time.Since(from)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the manager had not caught up with %s after 5 min: %d TrainJobs lag (%v)", ns, lagging, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// lagging counts the TrainJobs of ns the manager has not caught up with.
func lagging(ctx context.Context, ns string) (int, error) {
	tjs := &trainer.TrainJobList{}
	if err := k8sClient.List(ctx, tjs, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	jss := &jobsetv1alpha2.JobSetList{}
	if err := k8sClient.List(ctx, jss, client.InNamespace(ns)); err != nil {
		return 0, err
	}
	finished := map[string]bool{}
	exists := map[string]bool{}
	for i := range jss.Items {
		js := &jss.Items[i]
		exists[js.Name] = true
		finished[js.Name] = apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetCompleted)) ||
			apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetFailed))
	}
	n := 0
	for i := range tjs.Items {
		tj := &tjs.Items[i]
		done := terminal(tj.Status.Conditions) != ""
		if !done && (!exists[tj.Name] || finished[tj.Name]) {
			n++
		}
	}
	return n, nil
}

// createAll creates the TrainJobs at rate a second. A create the webhook cannot answer
// (the manager is down) is retried, as a client would; any other refusal fails the test.
func createAll(ctx context.Context, t *testing.T, ns string, jobs []jobSpec, rate float64) {
	t.Helper()
	tick := time.NewTicker(time.Duration(float64(time.Second) / rate))
	defer tick.Stop()
	for _, j := range jobs {
		<-tick.C
		if err := createRetrying(ctx, j.trainJob(ns), 2*time.Minute); err != nil {
			t.Fatalf("creating %s/%s: %v", ns, j.name, err)
		}
	}
}

// createRetrying creates obj, retrying for up to within while the answer is transient: the
// webhook cannot be reached (the manager is down, or its endpoint lags its readiness) or the
// apiserver cannot. A retry that finds the object already there means an earlier attempt stored
// it and lost its answer: that is a success. It returns the final answer.
func createRetrying(ctx context.Context, obj client.Object, within time.Duration) error {
	deadline := time.Now().Add(within)
	retried := false
	for {
		err := k8sClient.Create(ctx, obj.DeepCopyObject().(client.Object))
		if retried && apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil || !transient(err) || time.Now().After(deadline) || ctx.Err() != nil {
			return err
		}
		retried = true
		time.Sleep(200 * time.Millisecond)
	}
}

// transient tells the errors a client retries: nothing was decided.
func transient(err error) bool {
	return strings.Contains(err.Error(), "failed calling webhook") || reachable.Unreachable(err)
}

// killLoop kills and restarts the manager every 3-7 s until ctx ends.
func killLoop(ctx context.Context, t *testing.T, seed int64) (int, time.Time) {
	r := rand.New(rand.NewPCG(uint64(seed), 1))
	kills, last := 0, time.Time{}
	for {
		select {
		case <-ctx.Done():
			return kills, last
		case <-time.After(3*time.Second + time.Duration(r.Int64N(int64(4*time.Second)))):
		}
		if err := cluster.Kill(manager); err != nil {
			t.Errorf("kill: %v", err)
			return kills, last
		}
		kills, last = kills+1, time.Now()
		if err := cluster.Restart(manager); err != nil {
			t.Errorf("restart: %v", err)
			return kills, last
		}
	}
}

// waitFinished waits until n TrainJobs of ns have finished, and says how long after from.
func waitFinished(ctx context.Context, t *testing.T, ns string, n int, from time.Time) time.Duration {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for {
		list := &trainer.TrainJobList{}
		if err := k8sClient.List(ctx, list, client.InNamespace(ns)); err == nil {
			done := 0
			for i := range list.Items {
				if terminal(list.Items[i].Status.Conditions) != "" {
					done++
				}
			}
			if done == n {
				return time.Since(from)
			}
			if time.Now().After(deadline) {
				t.Fatalf("%d of %d TrainJobs of %s finished after 5 min", done, n, ns)
			}
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// terminal is the TrainJob's terminal condition type, or "".
func terminal(conds []metav1.Condition) string {
	for _, c := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if apimeta.IsStatusConditionTrue(conds, c) {
			return c
		}
	}
	return ""
}

// history records every version of every TrainJob of a namespace a watch delivers.
type history struct {
	mu       sync.Mutex
	versions map[string][]trainer.TrainJobStatus
}

func watchHistory(ctx context.Context, ns string) (*history, error) {
	h := &history{versions: map[string][]trainer.TrainJobStatus{}}
	w, err := k8sClient.Watch(ctx, &trainer.TrainJobList{}, client.InNamespace(ns))
	if err != nil {
		return nil, err
	}
	go func() {
		rv := ""
		for {
			for ev := range w.ResultChan() {
				tj, ok := ev.Object.(*trainer.TrainJob)
				if !ok || ev.Type == watch.Error {
					continue
				}
				rv = tj.ResourceVersion
				h.mu.Lock()
				h.versions[tj.Name] = append(h.versions[tj.Name], *tj.Status.DeepCopy())
				h.mu.Unlock()
			}
			if ctx.Err() != nil {
				return
			}
			// The apiserver ends watches now and then: go on from the last version seen.
			for {
				if w, err = k8sClient.Watch(ctx, &trainer.TrainJobList{}, client.InNamespace(ns), &client.ListOptions{Raw: &metav1.ListOptions{ResourceVersion: rv}}); err == nil || ctx.Err() != nil {
					break
				}
				time.Sleep(time.Second)
			}
			if ctx.Err() != nil {
				return
			}
		}
	}()
	return h, nil
}

func (h *history) snapshot() map[string][]trainer.TrainJobStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string][]trainer.TrainJobStatus, len(h.versions))
	for k, v := range h.versions {
		out[k] = append([]trainer.TrainJobStatus(nil), v...)
	}
	return out
}
