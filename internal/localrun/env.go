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
	"math"
	"regexp"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// sideObjects are the rendered ConfigMaps and Secrets, by name: what env and volumes read.
type sideObjects struct {
	configMaps map[string]*corev1.ConfigMap
	secrets    map[string]*corev1.Secret
}

func (s *sideObjects) configMapKey(name, key string) (string, bool) {
	cm, ok := s.configMaps[name]
	if !ok {
		return "", false
	}
	if v, ok := cm.Data[key]; ok {
		return v, true
	}
	v, ok := cm.BinaryData[key]
	return string(v), ok
}

func (s *sideObjects) secretKey(name, key string) (string, bool) {
	sec, ok := s.secrets[name]
	if !ok {
		return "", false
	}
	if v, ok := sec.Data[key]; ok {
		return string(v), true
	}
	v, ok := sec.StringData[key]
	return v, ok
}

// resolveEnv computes a container's environment as the kubelet would: envFrom first, then env in
// order, each value expanding $(NAME) of the variables before it.
func resolveEnv(c *corev1.Container, tmpl *corev1.PodTemplateSpec, pod metav1.ObjectMeta, side *sideObjects) ([]EnvVar, error) {
	var env []EnvVar
	set := func(name, value string) {
		if i := slices.IndexFunc(env, func(e EnvVar) bool { return e.Name == name }); i >= 0 {
			env[i].Value = value
			return
		}
		env = append(env, EnvVar{Name: name, Value: value})
	}
	for _, from := range c.EnvFrom {
		data, err := envFromData(from, side)
		if err != nil {
			return nil, err
		}
		for _, k := range slices.Sorted(maps.Keys(data)) {
			set(from.Prefix+k, data[k])
		}
	}
	for _, e := range c.Env {
		if e.ValueFrom == nil {
			set(e.Name, expand(e.Value, env))
			continue
		}
		v, ok, err := valueFrom(e.ValueFrom, c, tmpl, pod, side)
		if err != nil {
			return nil, fmt.Errorf("env %s: %w", e.Name, err)
		}
		if ok {
			set(e.Name, v)
		}
	}
	return env, nil
}

func envFromData(from corev1.EnvFromSource, side *sideObjects) (map[string]string, error) {
	switch {
	case from.ConfigMapRef != nil:
		if cm, ok := side.configMaps[from.ConfigMapRef.Name]; ok {
			return cm.Data, nil
		}
		if ptrTrue(from.ConfigMapRef.Optional) {
			return nil, nil
		}
		return nil, fmt.Errorf("envFrom: ConfigMap %q is not among the rendered objects", from.ConfigMapRef.Name)
	case from.SecretRef != nil:
		sec, ok := side.secrets[from.SecretRef.Name]
		if !ok {
			if ptrTrue(from.SecretRef.Optional) {
				return nil, nil
			}
			return nil, fmt.Errorf("envFrom: Secret %q is not among the rendered objects", from.SecretRef.Name)
		}
		data := map[string]string{}
		for k, v := range sec.Data {
			data[k] = string(v)
		}
		return data, nil
	}
	return nil, nil
}

func ptrTrue(b *bool) bool { return b != nil && *b }

// annotationPath reads metadata.annotations['key'] and metadata.labels['key'] field paths.
var annotationPath = regexp.MustCompile(`^metadata\.(annotations|labels)\['([^']+)'\]$`)

// valueFrom resolves a valueFrom; ok is false for an optional key that is absent.
func valueFrom(src *corev1.EnvVarSource, c *corev1.Container, tmpl *corev1.PodTemplateSpec, pod metav1.ObjectMeta, side *sideObjects) (string, bool, error) {
	switch {
	case src.FieldRef != nil:
		v, err := fieldValue(src.FieldRef.FieldPath, tmpl, pod)
		return v, err == nil, err
	case src.ResourceFieldRef != nil:
		v, err := resourceValue(src.ResourceFieldRef, c)
		return v, err == nil, err
	case src.ConfigMapKeyRef != nil:
		ref := src.ConfigMapKeyRef
		if v, ok := side.configMapKey(ref.Name, ref.Key); ok {
			return v, true, nil
		}
		if ptrTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("key %q of ConfigMap %q is not among the rendered objects", ref.Key, ref.Name)
	case src.SecretKeyRef != nil:
		ref := src.SecretKeyRef
		if v, ok := side.secretKey(ref.Name, ref.Key); ok {
			return v, true, nil
		}
		if ptrTrue(ref.Optional) {
			return "", false, nil
		}
		return "", false, fmt.Errorf("key %q of Secret %q is not among the rendered objects (a Secret of the cluster cannot be read here)", ref.Key, ref.Name)
	}
	return "", false, fmt.Errorf("an empty valueFrom")
}

// fieldValue is the downward API on this machine: the pod's metadata as the plan names it, and
// 127.0.0.1 for its addresses.
func fieldValue(path string, tmpl *corev1.PodTemplateSpec, pod metav1.ObjectMeta) (string, error) {
	switch path {
	case "metadata.name":
		return pod.Name, nil
	case "metadata.namespace":
		return pod.Namespace, nil
	case "metadata.uid":
		return "", nil
	case "status.podIP", "status.hostIP", "status.podIPs", "status.hostIPs":
		return "127.0.0.1", nil
	case "spec.nodeName":
		return "localhost", nil
	case "spec.serviceAccountName":
		return tmpl.Spec.ServiceAccountName, nil
	}
	if m := annotationPath.FindStringSubmatch(path); m != nil {
		if m[1] == "annotations" {
			return pod.Annotations[m[2]], nil
		}
		return pod.Labels[m[2]], nil
	}
	return "", fmt.Errorf("fieldRef %q has no value on this machine", path)
}

// resourceValue is a resourceFieldRef: the container's request or limit over the divisor,
// rounded up, as the kubelet computes it.
func resourceValue(ref *corev1.ResourceFieldSelector, c *corev1.Container) (string, error) {
	kind, name, ok := strings.Cut(ref.Resource, ".")
	if !ok {
		return "", fmt.Errorf("resourceFieldRef %q: want limits.<name> or requests.<name>", ref.Resource)
	}
	list := c.Resources.Requests
	if kind == "limits" {
		list = c.Resources.Limits
	}
	q, ok := list[corev1.ResourceName(name)]
	if !ok {
		return "0", nil
	}
	divisor := ref.Divisor
	if divisor.IsZero() {
		divisor = resource.MustParse("1")
	}
	return fmt.Sprint(int64(math.Ceil(float64(q.MilliValue()) / float64(divisor.MilliValue())))), nil
}

// expand replaces $(NAME) with the value of an earlier variable, and $$ with $; a reference to
// an unknown name stays as written, as in Kubernetes.
func expand(s string, env []EnvVar) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 == len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if j := slices.IndexFunc(env, func(e EnvVar) bool { return e.Name == name }); j >= 0 {
				b.WriteString(env[j].Value)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

func expandAll(args []string, env []EnvVar) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = expand(a, env)
	}
	return out
}
