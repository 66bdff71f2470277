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
	"fmt"
	"math/rand/v2"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/faults"
)

// gangRuntimeName is R2's runtime: MPI (an SSH key Secret and a hostfile ConfigMap) under a
// coscheduling gang (a PodGroup), so that a build writes at every write point.
const gangRuntimeName = "reliability-mpi-gang"

func gangRuntime() *trainer.ClusterTrainingRuntime {
	job := func(name string, spec batchv1.JobSpec, labels map[string]string, dependsOn ...jobsetv1alpha2.DependsOn) jobsetv1alpha2.ReplicatedJob {
		spec.BackoffLimit = ptr.To[int32](0)
		spec.Template.Spec.Containers = []corev1.Container{{Name: "node", Image: "mpioperator/mpi-pi:openmpi"}}
		return jobsetv1alpha2.ReplicatedJob{
			Name: name, Replicas: 1, DependsOn: dependsOn,
			Template: batchv1.JobTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: spec},
		}
	}
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{Name: gangRuntimeName},
		Spec: trainer.TrainingRuntimeSpec{
			MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](1), MLPolicySource: trainer.MLPolicySource{MPI: &trainer.MPIMLPolicySource{
				NumProcPerNode: ptr.To[int32](1), MPIImplementation: ptr.To(trainer.MPIImplementationOpenMPI),
				SSHAuthMountPath: ptr.To("/root/.ssh"), RunLauncherAsNode: ptr.To(false),
			}}},
			PodGroupPolicy: &trainer.PodGroupPolicy{PodGroupPolicySource: trainer.PodGroupPolicySource{
				Coscheduling: &trainer.CoschedulingPodGroupPolicySource{ScheduleTimeoutSeconds: ptr.To[int32](60)},
			}},
			Template: trainer.JobSetTemplateSpec{Spec: jobsetv1alpha2.JobSetSpec{ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{
				job("node", batchv1.JobSpec{}, nil),
				job("launcher", batchv1.JobSpec{}, map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer},
					jobsetv1alpha2.DependsOn{Name: "node", Status: jobsetv1alpha2.DependencyReady}),
			}}},
		},
	}
}

// gangPlan is R2's TrainJobs: one or two nodes, all succeeding (R1 covers failures; a failing
// gang's final counts depend on timing, which I4 would read as a difference).
func gangPlan(seed int64, n int) []jobSpec {
	r := rand.New(rand.NewPCG(uint64(seed), 2))
	jobs := make([]jobSpec, n)
	for i := range jobs {
		jobs[i] = jobSpec{name: fmt.Sprintf("gang-%03d", i), runtime: gangRuntimeName, nodes: int32(1 + r.IntN(2))}
	}
	return jobs
}

// TestR2CrashAtWrites: for every write point of a build (the snapshot, the SSH Secret, the
// hostfile ConfigMap, the PodGroup, the JobSet, the TrainJob status), the manager kills itself
// right after its n-th write there, in every process life, and is restarted at once; I1-I4 hold
// for every point.
func TestR2CrashAtWrites(t *testing.T) {
	seed := cfg.seeds[0]
	jobs := gangPlan(seed, cfg.r2Jobs)
	base := baseline(t, "r2-base", seed, jobs)
	for _, point := range faults.Points {
		t.Run(point, func(t *testing.T) {
			setFault(t, faults.CrashAfterWrite(point, cfg.r2After))
			r := runScenario(t, "r2-"+point, seed, jobs, disruption{restartCrashed: true})
			vs, err := check(t.Context(), r, base)
			if err != nil {
				t.Fatal(err)
			}
			dir, err := writeReport("r2-"+point, r, vs)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("R2 %s: %d TrainJobs, the manager crashed %d times after its write #%d there; every TrainJob had finished %.1fs after the last create, %d violations; report in %s",
				point, len(jobs), r.crashes, cfg.r2After, r.finished.Seconds(), len(vs), dir)
			for _, v := range vs {
				t.Errorf("%s: %s", point, v)
			}
			if r.crashes == 0 {
				t.Errorf("the manager never crashed at %s: the point was not tested", point)
			}
		})
	}
}
