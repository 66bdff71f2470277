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
	"maps"
	"path/filepath"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Volume is a folder standing in for a pod volume, with the files it starts with.
type Volume struct {
	Name  string `json:"name"`
	Dir   string `json:"dir"`
	Files []File `json:"files,omitempty"`
	// Rewrites lists the files changed from the render.
	Rewrites []Rewrite `json:"rewrites,omitempty"`
}

// File is one file of a ConfigMap, Secret or projected volume.
type File struct {
	Path    string `json:"path"`
	Content string `json:"-"`
	Mode    int32  `json:"mode"`
}

// addVolumes gives every volume of the JobSet's pods a folder (the same one for the same name:
// steps share them, as the initializers and the trainer share theirs on the cluster), filled
// from the rendered ConfigMaps and Secrets.
func (p *Plan) addVolumes(js *jobset.JobSet, side *sideObjects, rw *rewriter, opts Options) error {
	seen := map[string]bool{}
	for _, rj := range js.Spec.ReplicatedJobs {
		spec := rj.Template.Spec.Template.Spec
		volumes := slices.Clone(spec.Volumes)
		// A mount of a volume the pod does not define (the runtimes' "initializer", which an
		// administrator backs with a PVC) is a folder too.
		for _, c := range slices.Concat(spec.InitContainers, spec.Containers) {
			for _, m := range c.VolumeMounts {
				if !slices.ContainsFunc(volumes, func(v corev1.Volume) bool { return v.Name == m.Name }) {
					volumes = append(volumes, corev1.Volume{Name: m.Name})
				}
			}
		}
		for _, v := range volumes {
			if seen[v.Name] {
				continue
			}
			seen[v.Name] = true
			vol := Volume{Name: v.Name, Dir: VolumeDir(opts.Workdir, v.Name)}
			if err := vol.fill(&v, side, opts); err != nil {
				return fmt.Errorf("volume %q: %w", v.Name, err)
			}
			for i := range vol.Files {
				if out, changed := rw.file(vol.Files[i].Content); changed {
					vol.Rewrites = append(vol.Rewrites, Rewrite{Where: "file " + filepath.Join(v.Name, vol.Files[i].Path), Why: WhyHost})
					vol.Files[i].Content = out
				}
			}
			p.Volumes = append(p.Volumes, vol)
		}
	}
	return nil
}

func (vol *Volume) fill(v *corev1.Volume, side *sideObjects, opts Options) error {
	switch {
	case v.ConfigMap != nil:
		return vol.addConfigMap(v.ConfigMap.Name, v.ConfigMap.Items, v.ConfigMap.Optional, v.ConfigMap.DefaultMode, side)
	case v.Secret != nil:
		return vol.addSecret(v.Secret.SecretName, v.Secret.Items, v.Secret.Optional, v.Secret.DefaultMode, side)
	case v.Projected != nil:
		for _, src := range v.Projected.Sources {
			var err error
			switch {
			case src.ConfigMap != nil:
				err = vol.addConfigMap(src.ConfigMap.Name, src.ConfigMap.Items, src.ConfigMap.Optional, v.Projected.DefaultMode, side)
			case src.Secret != nil:
				err = vol.addSecret(src.Secret.Name, src.Secret.Items, src.Secret.Optional, v.Projected.DefaultMode, side)
			case src.ServiceAccountToken != nil:
				vol.Files = append(vol.Files, File{Path: src.ServiceAccountToken.Path, Content: opts.StatusToken, Mode: 0o600})
			}
			if err != nil {
				return err
			}
		}
	}
	return nil
}

func (vol *Volume) addConfigMap(name string, items []corev1.KeyToPath, optional *bool, mode *int32, side *sideObjects) error {
	cm, ok := side.configMaps[name]
	if !ok {
		if ptrTrue(optional) {
			return nil
		}
		return fmt.Errorf("the ConfigMap %q is not among the rendered objects", name)
	}
	data := maps.Clone(cm.Data)
	if data == nil {
		data = map[string]string{}
	}
	for k, b := range cm.BinaryData {
		data[k] = string(b)
	}
	return vol.addData(data, items, mode, "ConfigMap "+name)
}

func (vol *Volume) addSecret(name string, items []corev1.KeyToPath, optional *bool, mode *int32, side *sideObjects) error {
	sec, ok := side.secrets[name]
	if !ok {
		if ptrTrue(optional) {
			return nil
		}
		return fmt.Errorf("the Secret %q is not among the rendered objects (a Secret of the cluster cannot be read here)", name)
	}
	data := map[string]string{}
	for k, b := range sec.Data {
		data[k] = string(b)
	}
	maps.Copy(data, sec.StringData)
	return vol.addData(data, items, mode, "Secret "+name)
}

func (vol *Volume) addData(data map[string]string, items []corev1.KeyToPath, mode *int32, what string) error {
	fileMode := corev1.ConfigMapVolumeSourceDefaultMode
	if mode != nil {
		fileMode = *mode
	}
	if len(items) == 0 {
		for _, k := range slices.Sorted(maps.Keys(data)) {
			// Each key is a file name: the API server refuses keys such as "../x".
			for _, msg := range validation.IsConfigMapKey(k) {
				return fmt.Errorf("%s: %w", what, field.Invalid(field.NewPath("data").Key(k), k, msg))
			}
			vol.Files = append(vol.Files, File{Path: k, Content: data[k], Mode: fileMode})
		}
		return nil
	}
	for _, it := range items {
		v, ok := data[it.Key]
		if !ok {
			return fmt.Errorf("%s has no key %q", what, it.Key)
		}
		m := fileMode
		if it.Mode != nil {
			m = *it.Mode
		}
		vol.Files = append(vol.Files, File{Path: it.Path, Content: v, Mode: m})
	}
	return nil
}
