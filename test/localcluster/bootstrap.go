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
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Labels and annotations of the simulated nodes.
const (
	nodeAnnotation = "kwok.x-k8s.io/node"
	// GPUResource is the extended resource the nodes offer, as the NVIDIA device plugin names it.
	GPUResource = corev1.ResourceName("nvidia.com/gpu")
	// RackLabel and BlockLabel place a node in the simulated network topology (for Kueue's
	// topology-aware scheduling, pod affinities, ...): racks of NodesPerRack nodes, two racks a
	// block, one zone per block.
	RackLabel  = "topology.gantry.dev/rack"
	BlockLabel = "topology.gantry.dev/block"
	// GPUProductLabel is what GPU feature discovery labels nodes with.
	GPUProductLabel = "nvidia.com/gpu.product"
	// SimulatedGPU is the product the nodes claim to carry.
	SimulatedGPU = "NVIDIA-H100-80GB-HBM3"
)

// NodeName names the i-th simulated node.
func NodeName(i int) string { return fmt.Sprintf("gpu-node-%d", i) }

// bootstrap creates what every later component relies on, right after the apiserver is up.
func (c *Cluster) bootstrap(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	for _, ns := range []string{"kubeflow-system", "jobset-system"} {
		if err := ensureNamespace(ctx, cl, ns); err != nil {
			return err
		}
	}
	if err := ensureStorageClass(ctx, cl); err != nil {
		return err
	}
	for i := range c.Settings.Nodes.Count {
		if err := c.ensureNode(ctx, cl, i); err != nil {
			return err
		}
	}
	return nil
}

// ensureStorageClass makes the controller-manager's hostPath provisioner the default, so PVCs
// without a class (JobSet's volumeClaimPolicies) are bound: each gets a fresh directory under
// /tmp/hostpath_pv on this machine, removed when the claim is deleted.
func ensureStorageClass(ctx context.Context, cl client.Client) error {
	sc := &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{
			Name:        "standard",
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"},
		},
		Provisioner:       "kubernetes.io/host-path",
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimDelete),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if err := cl.Create(ctx, sc); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the default StorageClass: %w", err)
	}
	return nil
}

// ensureNode registers one simulated GPU node; kwok then keeps it Ready and runs its pods. A node
// kept from an earlier up (--keep-data) gets the current kwok endpoint.
func (c *Cluster) ensureNode(ctx context.Context, cl client.Client, i int) error {
	node := c.node(i)
	err := cl.Create(ctx, node)
	if err == nil {
		return nil
	}
	if !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating node %s: %w", node.Name, err)
	}
	have := &corev1.Node{}
	if err := cl.Get(ctx, types.NamespacedName{Name: node.Name}, have); err != nil {
		return err
	}
	if c.nodeEndpointCurrent(have) {
		return nil
	}
	// Addresses merge by type: kwok's Hostname stays.
	data, err := json.Marshal(map[string]any{"status": map[string]any{
		"addresses": node.Status.Addresses, "daemonEndpoints": node.Status.DaemonEndpoints,
	}})
	if err != nil {
		return err
	}
	if err := cl.Status().Patch(ctx, have, client.RawPatch(types.StrategicMergePatchType, data)); err != nil {
		return fmt.Errorf("setting the kwok endpoint of node %s: %w", node.Name, err)
	}
	return nil
}

// nodeIP is every node's InternalIP: the apiserver reaches the nodes' "kubelet", kwok, there.
const nodeIP = "127.0.0.1"

// nodeEndpoint is where the apiserver proxies a node's pods/log (exec, port-forward, ...): kwok's
// server, as a kubelet reports its own in the node status.
func (c *Cluster) nodeEndpoint(name string) ([]corev1.NodeAddress, corev1.NodeDaemonEndpoints) {
	return []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: nodeIP}, {Type: corev1.NodeHostName, Address: name}},
		corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: int32(c.Settings.Ports.Kwok)}}
}

func (c *Cluster) nodeEndpointCurrent(n *corev1.Node) bool {
	if n.Status.DaemonEndpoints.KubeletEndpoint.Port != int32(c.Settings.Ports.Kwok) {
		return false
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address == nodeIP
		}
	}
	return false
}

// node is the i-th simulated GPU node as ensureNode creates it.
func (c *Cluster) node(i int) *corev1.Node {
	n := c.Settings.Nodes
	name := NodeName(i)
	rack := i / n.NodesPerRack
	block := rack / 2
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:              resource.MustParse(n.CPU),
		corev1.ResourceMemory:           resource.MustParse(n.Memory),
		corev1.ResourcePods:             resource.MustParse("110"),
		corev1.ResourceEphemeralStorage: resource.MustParse("2Ti"),
	}
	labels := map[string]string{
		"type":                           "kwok",
		corev1.LabelHostname:             name,
		corev1.LabelOSStable:             "linux",
		corev1.LabelArchStable:           "amd64",
		corev1.LabelInstanceTypeStable:   "sim-gpu-node",
		corev1.LabelTopologyRegion:       "local",
		corev1.LabelTopologyZone:         fmt.Sprintf("local-%c", 'a'+block%26),
		BlockLabel:                       fmt.Sprintf("block-%d", block),
		RackLabel:                        fmt.Sprintf("rack-%d", rack),
		"node-role.kubernetes.io/worker": "",
		"nvidia.com/gpu.present":         "false",
		"nvidia.com/gpu.count":           "0",
		"sim.gantry.dev/node-index":      fmt.Sprint(i),
	}
	if n.GPUsPerNode > 0 {
		capacity[GPUResource] = *resource.NewQuantity(int64(n.GPUsPerNode), resource.DecimalSI)
		labels["nvidia.com/gpu.present"] = "true"
		labels["nvidia.com/gpu.count"] = fmt.Sprint(n.GPUsPerNode)
		labels[GPUProductLabel] = SimulatedGPU
		labels["nvidia.com/gpu.memory"] = "81559"
	}
	addresses, endpoints := c.nodeEndpoint(name)
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Labels:      labels,
			Annotations: map[string]string{nodeAnnotation: "fake"},
		},
		// kwok hands out pod IPs from the node's range.
		Spec: corev1.NodeSpec{PodCIDR: podCIDR(i), PodCIDRs: []string{podCIDR(i)}},
		Status: corev1.NodeStatus{
			Capacity: capacity, Allocatable: capacity,
			Addresses: addresses, DaemonEndpoints: endpoints,
		},
	}
}

// waitNodesReady waits until kwok reports every node Ready and the controller-manager has lifted
// the not-ready taint, so the scheduler will place pods there.
func (c *Cluster) waitNodesReady(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	return waitFor(ctx, 90*time.Second, "nodes", func(ctx context.Context) error {
		for i := range c.Settings.Nodes.Count {
			node := &corev1.Node{}
			if err := cl.Get(ctx, types.NamespacedName{Name: NodeName(i)}, node); err != nil {
				return err
			}
			if !nodeReady(node) {
				return fmt.Errorf("node %s is not Ready", node.Name)
			}
			for _, t := range node.Spec.Taints {
				if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
					return fmt.Errorf("node %s still has taint %s", node.Name, t.Key)
				}
			}
		}
		return nil
	})
}

func nodeReady(n *corev1.Node) bool {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status == corev1.ConditionTrue
		}
	}
	return false
}

// waitUsable is the last check of up: pods can be created (the default ServiceAccount exists),
// and every webhook answers (dry-run creates go through each component's admission webhooks).
func (c *Cluster) waitUsable(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	if err := waitFor(ctx, time.Minute, "default ServiceAccount", func(ctx context.Context) error {
		return cl.Get(ctx, types.NamespacedName{Namespace: "default", Name: "default"}, &corev1.ServiceAccount{})
	}); err != nil {
		return err
	}
	return waitFor(ctx, time.Minute, "admission webhooks", func(ctx context.Context) error {
		return c.smokeWebhooks(ctx, cl)
	})
}

// hostPathRoot is where the controller-manager's hostPath provisioner creates volumes.
const hostPathRoot = "/tmp/hostpath_pv/"

const hostPathVolumesFile = "hostpath-volumes.txt"

// recordHostPathVolumes notes, before the cluster stops, the directories of its provisioned
// volumes: they outlive the PersistentVolumes when etcd's data is wiped by the next up, which
// then removes them.
func (c *Cluster) recordHostPathVolumes() error {
	if !c.record("kube-apiserver").alive() {
		return nil
	}
	cl, err := c.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pvs := &corev1.PersistentVolumeList{}
	if err := cl.List(ctx, pvs); err != nil {
		return err
	}
	var paths []string
	for _, pv := range pvs.Items {
		if hp := pv.Spec.HostPath; hp != nil && strings.HasPrefix(hp.Path, hostPathRoot) {
			paths = append(paths, hp.Path)
		}
	}
	return writeFileAtomic(c.path(hostPathVolumesFile), []byte(strings.Join(paths, "\n")), 0o644)
}

// removeHostPathVolumes deletes the volume directories recorded by the last down.
func (c *Cluster) removeHostPathVolumes() {
	data, err := os.ReadFile(c.path(hostPathVolumesFile))
	if err != nil {
		return
	}
	for p := range strings.SplitSeq(string(data), "\n") {
		if clean := filepath.Clean(p); strings.HasPrefix(clean, hostPathRoot) {
			_ = os.RemoveAll(clean)
		}
	}
	_ = os.Remove(c.path(hostPathVolumesFile))
}

// MaxNodes is how many nodes get a pod range of their own from podCIDR.
const MaxNodes = (256 - 244) * 256

// podCIDR is the i-th node's pod range: a /24 from 10.244.0.0 upwards, 256 to each /16.
func podCIDR(i int) string {
	return fmt.Sprintf("10.%d.%d.0/24", 244+i/256, i%256)
}
