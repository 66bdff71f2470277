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

package localrun

import (
	"fmt"
	"net/http"
	"path"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// InvalidError is a rendered JobSet that the cluster would refuse. Its fields come from the
// TrainJob, its runtime or a runtime patch; here they name folders and files of the workdir, so
// a run never starts with them. It reads as the API server's Invalid status (apierrors.IsInvalid),
// so the CLI exits 2 as for any refused input.
type InvalidError struct {
	JobSet string
	Errs   field.ErrorList
}

func (e *InvalidError) Error() string {
	msgs := make([]string, len(e.Errs))
	for i, err := range e.Errs {
		msgs[i] = err.Error()
	}
	return fmt.Sprintf("the cluster would refuse the JobSet %q of this TrainJob (its fields come from the TrainJob, its runtime or a runtime patch):\n  %s",
		e.JobSet, strings.Join(msgs, "\n  "))
}

// Status makes the error an API status of reason Invalid.
func (e *InvalidError) Status() metav1.Status {
	return metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid, Message: e.Error()}
}

// validate checks, as Kubernetes, JobSet and Gantry's webhook do, every name and path of the
// JobSet that a local run turns into a folder or a file: the JobSet's name (the TrainJob's, a
// DNS-1035 label), the replicated jobs', containers' and volumes' names (DNS-1123 labels), mount
// and sub paths, and the paths of projected files.
func validate(js *jobset.JobSet) error {
	var errs field.ErrorList
	errs = append(errs, label(field.NewPath("metadata", "name"), js.Name, validation.IsDNS1035Label)...)
	for i, rj := range js.Spec.ReplicatedJobs {
		p := field.NewPath("spec", "replicatedJobs").Index(i)
		errs = append(errs, label(p.Child("name"), rj.Name, validation.IsDNS1123Label)...)
		errs = append(errs, validatePodSpec(p.Child("template", "spec", "template", "spec"), &rj.Template.Spec.Template.Spec)...)
	}
	if len(errs) > 0 {
		return &InvalidError{JobSet: js.Name, Errs: errs}
	}
	return nil
}

func validatePodSpec(p *field.Path, spec *corev1.PodSpec) field.ErrorList {
	var errs field.ErrorList
	for i, v := range spec.Volumes {
		vp := p.Child("volumes").Index(i)
		errs = append(errs, label(vp.Child("name"), v.Name, validation.IsDNS1123Label)...)
		switch {
		case v.ConfigMap != nil:
			errs = append(errs, itemPaths(vp.Child("configMap", "items"), v.ConfigMap.Items)...)
		case v.Secret != nil:
			errs = append(errs, itemPaths(vp.Child("secret", "items"), v.Secret.Items)...)
		case v.Projected != nil:
			for j, src := range v.Projected.Sources {
				sp := vp.Child("projected", "sources").Index(j)
				switch {
				case src.ConfigMap != nil:
					errs = append(errs, itemPaths(sp.Child("configMap", "items"), src.ConfigMap.Items)...)
				case src.Secret != nil:
					errs = append(errs, itemPaths(sp.Child("secret", "items"), src.Secret.Items)...)
				case src.ServiceAccountToken != nil:
					errs = append(errs, localPath(sp.Child("serviceAccountToken", "path"), src.ServiceAccountToken.Path)...)
				}
			}
		}
	}
	for _, list := range []struct {
		kind       string
		containers []corev1.Container
	}{{"initContainers", spec.InitContainers}, {"containers", spec.Containers}} {
		for i, c := range list.containers {
			cp := p.Child(list.kind).Index(i)
			errs = append(errs, label(cp.Child("name"), c.Name, validation.IsDNS1123Label)...)
			for j, m := range c.VolumeMounts {
				mp := cp.Child("volumeMounts").Index(j)
				errs = append(errs, label(mp.Child("name"), m.Name, validation.IsDNS1123Label)...)
				if hasBackstep(m.MountPath) {
					errs = append(errs, field.Invalid(mp.Child("mountPath"), m.MountPath, "must not contain '..'"))
				}
				if m.SubPath != "" {
					errs = append(errs, descendingPath(mp.Child("subPath"), m.SubPath)...)
				}
			}
		}
	}
	return errs
}

func label(p *field.Path, v string, check func(string) []string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range check(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func itemPaths(p *field.Path, items []corev1.KeyToPath) field.ErrorList {
	var errs field.ErrorList
	for i, it := range items {
		errs = append(errs, localPath(p.Index(i).Child("path"), it.Path)...)
	}
	return errs
}

// localPath is Kubernetes' rule for a projected file's path: relative, without a ".." element,
// not starting with ".." (the kubelet's own "..data" link).
func localPath(p *field.Path, v string) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	errs := descendingPath(p, v)
	if strings.HasPrefix(v, "..") && !strings.HasPrefix(v, "../") {
		errs = append(errs, field.Invalid(p, v, "must not start with '..'"))
	}
	return errs
}

// descendingPath is Kubernetes' rule for a sub path: relative and without a ".." element.
func descendingPath(p *field.Path, v string) field.ErrorList {
	var errs field.ErrorList
	if path.IsAbs(v) {
		errs = append(errs, field.Invalid(p, v, "must be a relative path"))
	}
	if hasBackstep(v) {
		errs = append(errs, field.Invalid(p, v, "must not contain '..'"))
	}
	return errs
}

func hasBackstep(v string) bool {
	for part := range strings.SplitSeq(v, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}
