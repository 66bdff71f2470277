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
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime"
)

// maxNameLength is the longest DNS label, which JobSet requires of every Job and pod name it
// generates.
const maxNameLength = 63

// podNameSuffix stands for the five random characters of a pod's name.
const podNameSuffix = "-xxxxx"

// JobSet's webhook refuses a JobSet whose generated names would not be DNS labels with these
// messages (sigs.k8s.io/jobset pkg/webhooks, jobNameTooLongErrorMsg and podNameTooLongErrorMsg):
// Gantry's refusal quotes the one that applies.
const (
	jobSetJobNameTooLong = "JobSet name is too long, job names generated for this JobSet will exceed 63 characters"
	jobSetPodNameTooLong = "JobSet name is too long, pod names generated for this JobSet will exceed 63 characters"
)

// validateName refuses a TrainJob name JobSet would refuse on every build: the JobSet is named
// like the TrainJob, and JobSet's webhook requires the names it generates to be DNS labels (RFC
// 1035), at most 63 characters: Jobs "<name>-<job>-<replica>" and, for Indexed Jobs, pods
// "<name>-<job>-<replica>-<index>-xxxxx". The limit depends on the runtime (its job names) and the
// counts (numNodes), so the error says what it is for this TrainJob, and quotes JobSet's refusal.
func validateName(info *runtime.Info, tj *trainer.TrainJob) field.ErrorList {
	if info.FinalPodSets == nil {
		return nil
	}
	limit, why, rule := maxNameLength, "", ""
	for _, ps := range info.FinalPodSets {
		rj := findJobByName(info, ps.Name)
		if rj == nil {
			continue
		}
		jobSuffix := "-" + ps.Name + "-" + strconv.Itoa(int(ps.Replicas)-1)
		if l := maxNameLength - len(jobSuffix); l < limit {
			limit, why, rule = l, fmt.Sprintf("JobSet names the Jobs of replicated job %q <name>%s", ps.Name, jobSuffix), jobSetJobNameTooLong
		}
		mode := ptr.Deref(rj.Template.Spec.CompletionMode, batchv1.IndexedCompletion)
		if mode != batchv1.IndexedCompletion {
			continue
		}
		podSuffix := jobSuffix + "-" + strconv.Itoa(int(ps.Count)-1) + podNameSuffix
		if l := maxNameLength - len(podSuffix); l < limit {
			limit, why, rule = l, fmt.Sprintf("JobSet names the pods of replicated job %q <name>%s", ps.Name, podSuffix), jobSetPodNameTooLong
		}
	}
	if len(tj.Name) <= limit {
		return nil
	}
	return field.ErrorList{field.Invalid(field.NewPath("metadata", "name"), tj.Name,
		fmt.Sprintf("must be no more than %d characters with runtime %q: %s, DNS labels (RFC 1035) of at most %d characters, "+
			"and refuses the JobSet of a longer name (%q)", limit, info.RuntimeName, why, maxNameLength, rule))}
}
