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

package localcluster

import (
	"context"
	"fmt"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

// NodeSummary is one line per node: readiness, topology and GPUs in use by running pods.
func (c *Cluster) NodeSummary(ctx context.Context) (string, error) {
	cl, err := c.Client()
	if err != nil {
		return "", err
	}
	nodes := &corev1.NodeList{}
	if err := cl.List(ctx, nodes); err != nil {
		return "", err
	}
	pods := &corev1.PodList{}
	if err := cl.List(ctx, pods); err != nil {
		return "", err
	}
	used := map[string]*resource.Quantity{}
	running := map[string]int{}
	for i := range pods.Items {
		p := &pods.Items[i]
		if p.Spec.NodeName == "" || p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed {
			continue
		}
		running[p.Spec.NodeName]++
		q := used[p.Spec.NodeName]
		if q == nil {
			q = resource.NewQuantity(0, resource.DecimalSI)
			used[p.Spec.NodeName] = q
		}
		q.Add(PodGPUs(p))
	}
	sort.Slice(nodes.Items, func(i, j int) bool { return nodes.Items[i].Name < nodes.Items[j].Name })
	var b strings.Builder
	fmt.Fprintf(&b, "%d nodes:\n", len(nodes.Items))
	for i := range nodes.Items {
		n := &nodes.Items[i]
		ready := "NotReady"
		if nodeReady(n) {
			ready = "Ready"
		}
		gpus := n.Status.Allocatable[GPUResource]
		inUse := "0"
		if q := used[n.Name]; q != nil {
			inUse = q.String()
		}
		fmt.Fprintf(&b, "  %-12s %-8s %s/%s  %s GPUs in use of %s, %d pods\n", n.Name, ready,
			n.Labels[BlockLabel], n.Labels[RackLabel], inUse, gpus.String(), running[n.Name])
	}
	return strings.TrimRight(b.String(), "\n"), nil
}

// PodGPUs is what a pod holds of nvidia.com/gpu, the way the scheduler counts it: the larger of
// the sum over containers and the largest init container, limits standing in for requests.
func PodGPUs(p *corev1.Pod) resource.Quantity {
	get := func(c corev1.Container) resource.Quantity {
		if q, ok := c.Resources.Requests[GPUResource]; ok {
			return q
		}
		return c.Resources.Limits[GPUResource]
	}
	sum := resource.Quantity{}
	for _, c := range p.Spec.Containers {
		sum.Add(get(c))
	}
	for _, c := range p.Spec.InitContainers {
		if q := get(c); q.Cmp(sum) > 0 {
			sum = q
		}
	}
	return sum
}
