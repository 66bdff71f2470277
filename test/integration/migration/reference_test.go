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

package migration

import (
	"maps"
	"os"
	"path/filepath"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/util"
)

const (
	systemNS = "kubeflow-system"
	userNS   = "team-a"
	// The reference's chart as its guide installs it; the suite reads the same chart from the
	// reference's Go module instead of its registry.
	referenceChartRef = "oci://ghcr.io/kubeflow/charts/kubeflow-trainer --version 2.3.0"
)

// jobSetLabels are the runtimes' JobSet template labels, which both controllers copy onto the
// JobSet.
var jobSetLabels = map[string]string{"example.com/cost-center": "research"}

// referenceChart copies Kubeflow Trainer v2.3.0's chart out of its module (test/differential
// requires it) into a temporary directory, with empty charts for its two dependencies: Helm
// refuses a chart whose dependencies are missing even when their conditions are off, and both are
// off here (jobset.install=false; dataCache.enabled defaults to false).
func referenceChart() string {
	mod, err := util.ModuleDirIn(filepath.Join(util.RepoRoot(), "test", "differential"), "github.com/kubeflow/trainer/v2")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	dir := filepath.Join(ginkgo.GinkgoT().TempDir(), "kubeflow-trainer")
	gomega.Expect(os.CopyFS(dir, os.DirFS(filepath.Join(mod, "charts", "kubeflow-trainer")))).To(gomega.Succeed())
	for name, version := range map[string]string{"jobset": "0.12.0", "lws": "0.8.0"} {
		sub := filepath.Join(dir, "charts", name)
		gomega.Expect(os.MkdirAll(sub, 0o755)).To(gomega.Succeed())
		chart := "apiVersion: v2\nname: " + name + "\nversion: " + version + "\n"
		gomega.Expect(os.WriteFile(filepath.Join(sub, "Chart.yaml"), []byte(chart), 0o600)).To(gomega.Succeed())
	}
	return dir
}

// referenceRuntimeSpec is a runtime the way users wrote them for Kubeflow Trainer: one trainer
// job of torchrun nodes.
func referenceRuntimeSpec(torch bool) trainer.TrainingRuntimeSpec {
	spec := trainer.TrainingRuntimeSpec{
		MLPolicy: &trainer.MLPolicy{NumNodes: ptr.To[int32](2)},
		Template: trainer.JobSetTemplateSpec{
			Metadata: metav1.ObjectMeta{Labels: jobSetLabels},
			Spec: jobsetv1alpha2.JobSetSpec{
				ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{nodeJob("example.com/base:v1")},
			},
		},
	}
	if torch {
		spec.MLPolicy.Torch = &trainer.TorchMLPolicySource{}
	}
	return spec
}

func nodeJob(image string) jobsetv1alpha2.ReplicatedJob {
	return jobsetv1alpha2.ReplicatedJob{
		Name:     "node",
		Replicas: 1,
		Template: batchv1.JobTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{trainer.AncestorLabel: trainer.AncestorTrainer}},
			Spec: batchv1.JobSpec{Template: corev1.PodTemplateSpec{Spec: corev1.PodSpec{
				RestartPolicy: corev1.RestartPolicyOnFailure,
				Containers:    []corev1.Container{{Name: "node", Image: image, Command: []string{"torchrun", "train.py"}}},
			}}},
		},
	}
}

func referenceClusterRuntime() *trainer.ClusterTrainingRuntime {
	return &trainer.ClusterTrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{
			Name:       "team-torch",
			Labels:     map[string]string{trainer.FrameworkLabel: "torch"},
			Finalizers: []string{trainer.ResourceInUseFinalizer},
		},
		Spec: referenceRuntimeSpec(true),
	}
}

func referenceRuntime() *trainer.TrainingRuntime {
	return &trainer.TrainingRuntime{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:  userNS,
			Name:       "team-plain",
			Labels:     map[string]string{trainer.FrameworkLabel: "torch"},
			Finalizers: []string{trainer.ResourceInUseFinalizer},
		},
		Spec: referenceRuntimeSpec(false),
	}
}

func referenceTrainJob(name, kind, runtime string, suspend bool) *trainer.TrainJob {
	return &trainer.TrainJob{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   userNS,
			Name:        name,
			Labels:      map[string]string{"team": "a"},
			Annotations: map[string]string{"example.com/owner": "alice"},
		},
		Spec: trainer.TrainJobSpec{
			RuntimeRef: trainer.RuntimeRef{Name: runtime, Kind: ptr.To(kind)},
			Trainer:    &trainer.Trainer{Image: ptr.To("example.com/train:v2"), NumNodes: ptr.To[int32](2)},
			Suspend:    ptr.To(suspend),
		},
	}
}

// referenceJobSet is the JobSet the reference made for tj: of its name, with the runtime's
// template labels, controlled by it.
func referenceJobSet(tj *trainer.TrainJob, suspend bool) *jobsetv1alpha2.JobSet {
	job := nodeJob("example.com/train:v2")
	job.Template.Spec.Parallelism = ptr.To[int32](2)
	job.Template.Spec.Completions = ptr.To[int32](2)
	return &jobsetv1alpha2.JobSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       tj.Namespace,
			Name:            tj.Name,
			Labels:          maps.Clone(jobSetLabels),
			OwnerReferences: []metav1.OwnerReference{*metav1.NewControllerRef(tj, trainer.GroupVersion.WithKind(trainer.TrainJobKind))},
		},
		Spec: jobsetv1alpha2.JobSetSpec{
			ReplicatedJobs: []jobsetv1alpha2.ReplicatedJob{job},
			Suspend:        ptr.To(suspend),
		},
	}
}

func jobStatus(name string, ready, active, succeeded, suspended int32) trainer.JobStatus {
	return trainer.JobStatus{
		Name: name, Ready: ptr.To(ready), Active: ptr.To(active), Succeeded: ptr.To(succeeded),
		Failed: ptr.To[int32](0), Suspended: ptr.To(suspended),
	}
}

func condition(typ, reason, message string) metav1.Condition {
	return metav1.Condition{Type: typ, Status: metav1.ConditionTrue, Reason: reason, Message: message, LastTransitionTime: metav1.Now()}
}
