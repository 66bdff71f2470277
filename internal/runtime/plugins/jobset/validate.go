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

package jobset

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apivalidation "k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// Validate checks the initializers against the runtime, the runtime patches' shape, and that
// patches change only around a suspension and never under active Jobs.
func (*JobSet) Validate(info *runtime.Info, old, tj *trainer.TrainJob) (admission.Warnings, field.ErrorList) {
	var errs field.ErrorList
	if init := tj.Spec.Initializer; init != nil {
		if init.Dataset != nil {
			errs = append(errs, validateInitializer(info, tj, trainer.AncestorDatasetInitializer, "datasetConfig")...)
		}
		if init.Model != nil {
			errs = append(errs, validateInitializer(info, tj, trainer.AncestorModelInitializer, "modelConfig")...)
		}
	}
	if t := tj.Spec.Trainer; t != nil && t.NumNodes != nil && *t.NumNodes > MaxPodsPerJob {
		errs = append(errs, field.Invalid(field.NewPath("spec", "trainer", "numNodes"), *t.NumNodes,
			fmt.Sprintf("must be at most %d, the most pods an Indexed Job runs", MaxPodsPerJob)))
	}
	errs = append(errs, validateRuntimePatches(info, tj)...)
	var warnings admission.Warnings
	if old == nil {
		errs = append(errs, validateName(info, tj)...)
		warnings = emptyTrainerWarning(info)
	}
	if old != nil {
		errs = append(errs, validatePatchChange(info, old, tj)...)
	}
	return warnings, errs
}

// emptyTrainerWarning says so when the trainer step would run no pod (numNodes 0): its Job
// completes at once and so does the TrainJob, having trained nothing. Kubeflow Trainer accepts
// it, so Gantry does too, with this warning.
func emptyTrainerWarning(info *runtime.Info) admission.Warnings {
	for _, ps := range info.FinalPodSets {
		if ps.Ancestor == trainer.AncestorTrainer && ps.Count == 0 {
			return admission.Warnings{fmt.Sprintf("replicated job %q runs no pods (numNodes is 0): the TrainJob will complete without training", ps.Name)}
		}
	}
	return nil
}

// validateInitializer checks that the runtime has the initializer job, found by its name as
// Kubeflow Trainer finds it (not by its ancestor label), with the initializer container (a
// regular or an init container) and, on a regular container, the volume mount the initializer
// writes to. Refusals name spec.runtimeRef, as Kubeflow Trainer's do.
func validateInitializer(info *runtime.Info, tj *trainer.TrainJob, job, config string) field.ErrorList {
	path := field.NewPath("spec", "runtimeRef")
	rj := findJob(info.Template.ReplicatedJobs, func(rj *jobsetv1alpha2.ReplicatedJob) bool { return rj.Name == job })
	if rj == nil {
		return field.ErrorList{field.Invalid(path, tj.Spec.RuntimeRef,
			fmt.Sprintf("must have %s job when trainJob is configured with input %s", job, config))}
	}
	pod := &rj.Template.Spec.Template.Spec
	if findContainer(pod.Containers, job) == nil && findContainer(pod.InitContainers, job) == nil {
		return field.ErrorList{field.Invalid(path, tj.Spec.RuntimeRef,
			fmt.Sprintf("must have container with name - %s in the %s job", job, job))}
	}
	c := findContainer(pod.Containers, job)
	if c == nil || !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == initializerVolume }) {
		return field.ErrorList{field.Invalid(path, tj.Spec.RuntimeRef,
			fmt.Sprintf("must have volumeMount with name - %s in container %s of the %s job", initializerVolume, job, job))}
	}
	return nil
}

// initializerVolume is the volume the initializers write the dataset and model into.
const initializerVolume = "initializer"

// envOwnedContainers get their env from the TrainJob spec, never from a patch.
var envOwnedContainers = []string{trainer.AncestorDatasetInitializer, trainer.AncestorModelInitializer, runtime.NodeContainer}

func validateRuntimePatches(info *runtime.Info, tj *trainer.TrainJob) field.ErrorList {
	var errs field.ErrorList
	for i, p := range tj.Spec.RuntimePatches {
		path := field.NewPath("spec", "runtimePatches").Index(i)
		errs = append(errs, apivalidation.IsDomainPrefixedPath(path.Child("manager"), p.Manager)...)
		if p.TrainingRuntimeSpec == nil || p.TrainingRuntimeSpec.Template == nil || p.TrainingRuntimeSpec.Template.Spec == nil {
			continue
		}
		jobsPath := path.Child("trainingRuntimeSpec", "template", "spec", "replicatedJobs")
		for j, rjp := range p.TrainingRuntimeSpec.Template.Spec.ReplicatedJobs {
			rj := findJob(info.RuntimeSpec.Template.Spec.ReplicatedJobs, func(rj *jobsetv1alpha2.ReplicatedJob) bool { return rj.Name == rjp.Name })
			if rj == nil {
				errs = append(errs, field.Invalid(jobsPath.Index(j).Child("name"), rjp.Name,
					"must not have replicated job that doesn't exist in the runtime job template"))
				continue
			}
			if rjp.Template == nil || rjp.Template.Spec == nil || rjp.Template.Spec.Template == nil || rjp.Template.Spec.Template.Spec == nil {
				continue
			}
			podPath := jobsPath.Index(j).Child("template", "spec", "template", "spec")
			pod := &rj.Template.Spec.Template.Spec
			errs = append(errs, validateContainerPatches(podPath.Child("initContainers"), rjp.Template.Spec.Template.Spec.InitContainers, pod.InitContainers, "initContainer", rj.Name)...)
			errs = append(errs, validateContainerPatches(podPath.Child("containers"), rjp.Template.Spec.Template.Spec.Containers, pod.Containers, "container", rj.Name)...)
		}
	}
	return errs
}

func validateContainerPatches(path *field.Path, patches []trainer.ContainerPatch, runtimeContainers []corev1.Container, what, job string) field.ErrorList {
	var errs field.ErrorList
	for k, cp := range patches {
		if findContainer(runtimeContainers, cp.Name) == nil {
			errs = append(errs, field.Invalid(path.Index(k).Child("name"), cp.Name,
				fmt.Sprintf("must not have %s that doesn't exist in the runtime job %s", what, job)))
			continue
		}
		if len(cp.Env) > 0 && slices.Contains(envOwnedContainers, cp.Name) {
			errs = append(errs, field.Invalid(path.Index(k).Child("env"), field.OmitValueType{},
				"must not have envs for the dataset-initializer, model-initializer, node containers"))
		}
	}
	return errs
}

// validatePatchChange lets runtime patches change only when the TrainJob is suspended before or
// after the update (so Kueue can write its patch and resume in one request), and never while a
// Job of the JobSet is active.
func validatePatchChange(info *runtime.Info, old, tj *trainer.TrainJob) field.ErrorList {
	if patchesEqual(old.Spec.RuntimePatches, tj.Spec.RuntimePatches) {
		return nil
	}
	path := field.NewPath("spec", "runtimePatches")
	if !trainjob.Suspended(old) && !trainjob.Suspended(tj) {
		return field.ErrorList{field.Forbidden(path,
			"RuntimePatches can only be modified when the TrainJob is suspended before or after the update")}
	}
	// One error per active replicated job, in status order, as Kubeflow Trainer reports them.
	var errs field.ErrorList
	if info.Observed.JobSet != nil {
		for _, s := range info.Observed.JobSet.Status.ReplicatedJobsStatus {
			if s.Active > 0 {
				errs = append(errs, field.Forbidden(path,
					fmt.Sprintf("RuntimePatches cannot be modified when the JobSet's ReplicatedJob %s is still active", s.Name)))
			}
		}
	}
	return errs
}

// patchesEqual compares patches ignoring the admission timestamps.
func patchesEqual(a, b []trainer.RuntimePatch) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		x.Time, y.Time = nil, nil
		if !equality.Semantic.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func findJob(jobs []jobsetv1alpha2.ReplicatedJob, match func(*jobsetv1alpha2.ReplicatedJob) bool) *jobsetv1alpha2.ReplicatedJob {
	for i := range jobs {
		if match(&jobs[i]) {
			return &jobs[i]
		}
	}
	return nil
}

func findJobByName(info *runtime.Info, name string) *jobsetv1alpha2.ReplicatedJob {
	return findJob(info.Template.ReplicatedJobs, func(rj *jobsetv1alpha2.ReplicatedJob) bool { return rj.Name == name })
}

func findContainer(cs []corev1.Container, name string) *corev1.Container {
	for i := range cs {
		if cs[i].Name == name {
			return &cs[i]
		}
	}
	return nil
}
