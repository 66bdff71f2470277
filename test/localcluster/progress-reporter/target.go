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

package main

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/url"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
)

// target is where and how one pod reports, read from the pod as a kubelet and the training
// code would: the URL from the env, the token's audience and lifetime from the projected
// volume mounted at the token path, the CA from the ConfigMap projected at the CA path.
type target struct {
	// url is the env's URL with its host replaced by 127.0.0.1: the Service name it holds
	// resolves only inside a cluster, and the local cluster's status server listens on the host
	// at the URL's port.
	url               string
	namespace, pod    string
	podUID            string
	serviceAccount    string
	audience          string
	expirationSeconds int64
	caConfigMap       string
	caKey             string
	container         *corev1.Container
}

// trainerContainer is the first container with the status server's URL in its env: the
// TrainJobStatus plugin gives it to every container of the trainer job.
func trainerContainer(pod *corev1.Pod) (*corev1.Container, string) {
	for i := range pod.Spec.Containers {
		c := &pod.Spec.Containers[i]
		if v := envValue(c, trainjobstatus.EnvServerURL); v != "" {
			return c, v
		}
	}
	return nil, ""
}

func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom == nil {
			return e.Value
		}
	}
	return ""
}

// targetOf reads a pod's target; errors say what the pod lacks.
func targetOf(pod *corev1.Pod) (*target, error) {
	c, raw := trainerContainer(pod)
	if c == nil {
		return nil, errors.New("no container has " + trainjobstatus.EnvServerURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "https" || u.Port() == "" {
		return nil, fmt.Errorf("%s %q is not an https URL with a port", trainjobstatus.EnvServerURL, raw)
	}
	u.Host = net.JoinHostPort("127.0.0.1", u.Port())
	t := &target{
		url: u.String(), namespace: pod.Namespace, pod: pod.Name, podUID: string(pod.UID),
		serviceAccount: cmp.Or(pod.Spec.ServiceAccountName, "default"), container: c,
	}
	tok, err := projection(pod, c, envValue(c, trainjobstatus.EnvToken))
	if err != nil {
		return nil, fmt.Errorf("the token: %w", err)
	}
	caPath := envValue(c, trainjobstatus.EnvCACert)
	ca, err := projection(pod, c, caPath)
	if err != nil {
		return nil, fmt.Errorf("the CA: %w", err)
	}
	rel := path.Base(caPath)
	for _, src := range tok.Sources {
		if sat := src.ServiceAccountToken; sat != nil && sat.Path == path.Base(envValue(c, trainjobstatus.EnvToken)) {
			t.audience = sat.Audience
			t.expirationSeconds = 3600
			if sat.ExpirationSeconds != nil {
				t.expirationSeconds = *sat.ExpirationSeconds
			}
		}
	}
	for _, src := range ca.Sources {
		if cm := src.ConfigMap; cm != nil {
			if key, ok := keyAt(cm.Items, rel); ok {
				t.caConfigMap, t.caKey = cm.Name, key
			}
		}
	}
	if t.audience == "" || t.caConfigMap == "" {
		return nil, errors.New("the projected volume holds no service-account token or no CA ConfigMap at the env's paths")
	}
	return t, nil
}

// projection is the projected volume the container mounts at the directory of file.
func projection(pod *corev1.Pod, c *corev1.Container, file string) (*corev1.ProjectedVolumeSource, error) {
	if file == "" {
		return nil, errors.New("no path in the env")
	}
	dir := path.Dir(file)
	for _, m := range c.VolumeMounts {
		if path.Clean(m.MountPath) != dir {
			continue
		}
		for _, v := range pod.Spec.Volumes {
			if v.Name == m.Name && v.Projected != nil {
				return v.Projected, nil
			}
		}
	}
	return nil, fmt.Errorf("no projected volume is mounted at %s", dir)
}

// keyAt is the ConfigMap key projected to file: the item whose path it is, or the key of that
// name when the projection lists no items.
func keyAt(items []corev1.KeyToPath, file string) (string, bool) {
	if len(items) == 0 {
		return file, true
	}
	for _, it := range items {
		if it.Path == file {
			return it.Key, true
		}
	}
	return "", false
}

// leaders picks one running pod per TrainJob (per URL): the lowest ranks first (completion
// index, then the replicated job's index and name, then the pod's name), as rank 0 reports in
// real training code. Pods that opted out, or whose TrainJob has a pod that did, are left out.
func leaders(pods []*corev1.Pod) map[string]*corev1.Pod {
	byURL := map[string][]*corev1.Pod{}
	optedOut := map[string]bool{}
	for _, p := range pods {
		_, u := trainerContainer(p)
		if u == "" {
			continue
		}
		if p.Annotations[AnnotationProgress] == "false" {
			optedOut[u] = true
		}
		if p.Status.Phase == corev1.PodRunning && p.DeletionTimestamp == nil && p.Status.StartTime != nil {
			byURL[u] = append(byURL[u], p)
		}
	}
	out := map[string]*corev1.Pod{}
	for u, ps := range byURL {
		if !optedOut[u] {
			out[u] = slices.MinFunc(ps, rankOrder)
		}
	}
	return out
}

func rankOrder(a, b *corev1.Pod) int {
	return cmp.Or(
		cmp.Compare(labelInt(a, "batch.kubernetes.io/job-completion-index"), labelInt(b, "batch.kubernetes.io/job-completion-index")),
		cmp.Compare(labelInt(a, jobsetv1alpha2.JobIndexKey), labelInt(b, jobsetv1alpha2.JobIndexKey)),
		strings.Compare(a.Labels[jobsetv1alpha2.ReplicatedJobNameKey], b.Labels[jobsetv1alpha2.ReplicatedJobNameKey]),
		strings.Compare(a.Name, b.Name),
	)
}

// labelInt is a numeric label, or a large number when it is missing or not a number.
func labelInt(p *corev1.Pod, key string) int {
	n, err := strconv.Atoi(p.Labels[key])
	if err != nil {
		return 1 << 30
	}
	return n
}
