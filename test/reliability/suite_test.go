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

// Package reliability is the fault suite: it runs TrainJobs on the local cluster (real etcd,
// kube-apiserver with an audit log, JobSet, the Job controller, kwok) while it breaks the
// manager, and checks invariants that a platform team can read as guarantees:
//
//	I1 exactly one JobSet per TrainJob, owned by its UID, and no orphans;
//	I2 at most one successful create per child object (the apiserver's audit log);
//	I3 a TrainJob that reached Complete or Failed never leaves it (a watch during the run);
//	I4 the final statuses equal those of a run of the same seed without faults.
//
// RELIABILITY_MODE=quick (the default, part of make test) runs one seed with a light load;
// RELIABILITY_MODE=full (make test-reliability) the load and three seeds. Each scenario
// writes a report directory under _output/reliability.
package reliability

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// config is the load of a run.
type config struct {
	mode string
	// jobs TrainJobs are created at rate per second while the chaos lasts.
	jobs  int
	rate  float64
	chaos time.Duration
	seeds []int64
	// converge bounds the time from the last kill until every TrainJob has finished.
	converge time.Duration
	// reports is where each scenario writes its report directory.
	reports string
	// r2Jobs TrainJobs run for each write point of R2, whose manager crashes after its r2After-th
	// write there in each process life.
	r2Jobs, r2After int
	// r4Jobs TrainJobs are created across r4Cycles apiserver outages; r6Jobs under a throttled
	// client; i5Jobs settle before the manager is watched for needless writes.
	r4Jobs, r4Cycles, r6Jobs, i5Jobs int
	// r3Jobs arrive at 200 a minute during r3Cycles leader failovers.
	r3Jobs, r3Cycles int
	// quiet is how long I5 watches a settled cluster for writes.
	quiet time.Duration
}

func loadConfig() config {
	c := config{mode: "quick", jobs: 60, rate: 10, chaos: 30 * time.Second, seeds: []int64{1}, converge: 30 * time.Second,
		r2Jobs: 10, r2After: 2, r4Jobs: 60, r4Cycles: 1, r6Jobs: 60, i5Jobs: 0, r3Jobs: 60, r3Cycles: 1, quiet: 30 * time.Second}
	if os.Getenv("RELIABILITY_MODE") == "full" {
		c = config{mode: "full", jobs: 500, rate: 25, chaos: 60 * time.Second, seeds: []int64{1, 2, 3}, converge: 30 * time.Second,
			r2Jobs: 20, r2After: 1, r4Jobs: 300, r4Cycles: 3, r6Jobs: 300, i5Jobs: 1000, r3Jobs: 500, r3Cycles: 5, quiet: 60 * time.Second}
	}
	if n, err := strconv.Atoi(os.Getenv("RELIABILITY_JOBS")); err == nil && n > 0 {
		c.jobs = n
	}
	c.reports = filepath.Join(util.RepoRoot(), "_output", "reliability")
	return c
}

var (
	cfg        config
	cluster    *localcluster.Cluster
	k8sClient  client.WithWatch
	restConfig *rest.Config
)

func TestMain(m *testing.M) {
	ctrllog.SetLogger(logr.Discard())
	cfg = loadConfig()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "reliability suite:", err)
		code = 1
	}
	os.Exit(code)
}

// runtimeName is the suite's runtime: torch on one job whose pods are not retried, so a failing
// TrainJob fails within seconds instead of after the Job's exponential back-off.
const runtimeName = "reliability-torch"

func suiteRuntime() *trainer.ClusterTrainingRuntime {
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: runtimeName},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{Torch: &trainer.TorchMLPolicySource{}}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{{
				Name: "node", Replicas: 1,
				Template: batchv1.JobTemplateSpec{
					ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}},
					Spec: batchv1.JobSpec{BackoffLimit: ptr.To[int32](0), Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
						Containers: []corev1.Container{{Name: "node", Image: "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"}},
					}}},
				},
			}}}},
		},
	}
}

func run(m *testing.M) (int, error) {
	root := util.RepoRoot()
	stateDir := filepath.Join(root, ".state", "reliability")
	// A cluster an interrupted run left behind goes first, so its ports are free again.
	if stale, err := localcluster.Open(root, stateDir); err == nil && stale.Running() {
		if err := stale.Down(); err != nil {
			return 1, err
		}
	}
	s := localcluster.DefaultSettings()
	// Below the kernel's ephemeral range (32768 and up): a port there can be taken by any
	// outgoing connection between the check and the bind. The e2e suite's start at 20000.
	offset, err := localcluster.FreePortOffset(s.Ports, 10000, 100, 20)
	if err != nil {
		return 1, err
	}
	s.Ports = s.Ports.Offset(offset)
	s.Audit = true
	// Short pods: many TrainJobs finish while the manager is being killed.
	s.PodDuration = localcluster.Duration{Duration: 2 * time.Second}
	cluster = &localcluster.Cluster{
		Root: root, StateDir: stateDir, BinDir: filepath.Join(root, "bin"), Out: os.Stderr, Settings: s,
		// The manager the guards inject faults into (GANTRY_FAULT_INJECTION) has them built in.
		ManagerBuildTags: []string{"faults"},
	}
	ctx := context.Background()
	if err := cluster.Up(ctx); err != nil {
		// What started before the failure would otherwise hold its ports for the next run.
		return 1, errors.Join(err, cluster.Down())
	}
	if os.Getenv("RELIABILITY_KEEP_CLUSTER") != "1" {
		defer func() { _ = cluster.Down() }()
	}
	if restConfig, err = cluster.RESTConfig(); err != nil {
		return 1, err
	}
	sch, err := scheme.New()
	if err != nil {
		return 1, err
	}
	if k8sClient, err = client.NewWithWatch(restConfig, client.Options{Scheme: sch}); err != nil {
		return 1, err
	}
	for _, rt := range []*trainer.ClusterTrainingRuntime{suiteRuntime(), gangRuntime()} {
		if err := client.IgnoreAlreadyExists(k8sClient.Create(ctx, rt)); err != nil {
			return 1, fmt.Errorf("creating the runtime %s: %w", rt.Name, err)
		}
	}
	return m.Run(), nil
}
