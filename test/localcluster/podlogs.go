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
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/gantry-ml/gantry/internal/manifest"
)

// Pod logs on the local cluster. There is no kubelet: kwok answers the apiserver's pods/log
// requests (GET /containerLogs/NS/POD/CONTAINER on its server, HTTPS with a certificate of the
// cluster CA) from files in the CRI log format. Every pod shows DefaultPodLogs (one ClusterLogs
// in kwok's configuration); SetPodLogs points one pod at a file of its own (a kwok Logs object,
// which kwok reads from the apiserver), which a test then writes with AppendPodLogs.
//
// kwok matches Logs objects by pod name and namespace only (not by labels), and follows a file
// until the client goes away: `kubectl logs -f` on the local cluster never ends by itself, even
// once the pod has finished, where a kubelet ends it when the container exits.
const (
	podLogsDir         = "pod-logs"
	kwokLogsConfigFile = "kwok-logs.yaml"
	// DefaultPodLogs is the name (for PodLogsFile) of the file every pod without its own shows.
	DefaultPodLogs = "default"
	// logsCheckContainer is a container name no pod has: kwok's answer for it tells which rule
	// serves a pod.
	logsCheckContainer = "gantry-logs-check"
)

var (
	// kwokServingCert is kwok's certificate for HTTPS; kubeletClientCert the apiserver's client
	// certificate for kubelets (--kubelet-client-certificate), kwok's case.
	kwokServingCert   = serving("kwok", "kwok")
	kubeletClientCert = certSpec{File: "apiserver-kubelet-client", CommonName: "kube-apiserver-kubelet-client"}

	kwokLogsGVK = schema.GroupVersionKind{Group: "kwok.x-k8s.io", Version: "v1alpha1", Kind: "Logs"}
	// defaultPodLogLines are what every pod prints: a few lines of a plausible training run.
	defaultPodLogLines = []string{
		"[rank 0] initialized process group: backend nccl, world size from PET_NNODES x PET_NPROC_PER_NODE",
		"[rank 0] loaded dataset and model; starting training",
		"epoch 1/3  step  50/150  loss 2.3021  lr 1.00e-04",
		"epoch 1/3  step 100/150  loss 1.8764  lr 1.00e-04",
		"epoch 2/3  step 150/150  loss 1.2290  lr 5.00e-05",
		"epoch 3/3  step 150/150  loss 0.8137  lr 2.50e-05",
		"[rank 0] training complete",
	}
)

// PodLogsFile is the file kwok serves as the logs of the pods pointed at name: DefaultPodLogs
// for every pod, or a name given to SetPodLogs. Each line is in the CRI log format ("TIME
// stdout F TEXT"): write it with AppendPodLogs.
func (c *Cluster) PodLogsFile(name string) string {
	return c.path(podLogsDir, name+".log")
}

// AppendPodLogs appends lines (a line with newlines counts as several) to PodLogsFile(name),
// creating it if need be, stamped with the current time; a `kubectl logs -f` of a pod served from
// the file shows them within about a second.
func (c *Cluster) AppendPodLogs(name string, lines ...string) error {
	return appendCRILog(c.PodLogsFile(name), time.Now(), lines...)
}

// SetPodLogs makes kwok serve the logs of every container of the pod namespace/pod from
// PodLogsFile(name) (created empty if missing; pods may share a name), and returns once kwok
// does. The kwok Logs object it applies (named after the pod, in its namespace) is owned by the
// pod, so it goes with it. The pod must exist: kwok knows pods by name, which a controller picks.
func (c *Cluster) SetPodLogs(ctx context.Context, namespace, pod, name string) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	p := &corev1.Pod{}
	if err := cl.Get(ctx, types.NamespacedName{Namespace: namespace, Name: pod}, p); err != nil {
		return err
	}
	file, err := filepath.Abs(c.PodLogsFile(name))
	if err != nil {
		return err
	}
	if err := appendCRILog(file, time.Now()); err != nil {
		return err
	}
	if err := apply(ctx, cl, podLogsObject(p, file)); err != nil {
		if meta.IsNoMatchError(err) {
			return fmt.Errorf("the cluster in %s has no kwok Logs API: it was started by an older checkout; run down and up: %w", c.StateDir, err)
		}
		return err
	}
	return waitFor(ctx, 30*time.Second, fmt.Sprintf("kwok serving the logs of pod %s/%s from %s", namespace, pod, file),
		func(ctx context.Context) error { return c.kwokServesOwnLogs(ctx, namespace, pod) })
}

// kwokServesOwnLogs asks kwok (over plain HTTP, which its port also speaks) for the logs of a
// container the pod lacks: the default ClusterLogs serves any container, the pod's Logs object
// only those it names.
func (c *Cluster) kwokServesOwnLogs(ctx context.Context, namespace, pod string) error {
	u := fmt.Sprintf("%s/containerLogs/%s/%s/%s", localURL("http", c.Settings.Ports.Kwok),
		url.PathEscape(namespace), url.PathEscape(pod), logsCheckContainer)
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode == http.StatusBadRequest && strings.Contains(string(body), "log target not found") {
		return nil
	}
	return fmt.Errorf("kwok does not see the Logs object yet (HTTP %d)", resp.StatusCode)
}

// podLogsObject is the kwok Logs object serving every container of pod from file.
func podLogsObject(pod *corev1.Pod, file string) *unstructured.Unstructured {
	var containers []any
	for _, ct := range pod.Spec.InitContainers {
		containers = append(containers, ct.Name)
	}
	for _, ct := range pod.Spec.Containers {
		containers = append(containers, ct.Name)
	}
	for _, ct := range pod.Spec.EphemeralContainers {
		containers = append(containers, ct.Name)
	}
	o := &unstructured.Unstructured{Object: map[string]any{
		"spec": map[string]any{"logs": []any{
			map[string]any{"containers": containers, "logsFile": file, "follow": true},
		}},
	}}
	o.SetGroupVersionKind(kwokLogsGVK)
	o.SetNamespace(pod.Namespace)
	o.SetName(pod.Name)
	o.SetLabels(map[string]string{"app.kubernetes.io/managed-by": fieldOwner})
	o.SetOwnerReferences([]metav1.OwnerReference{{
		APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID, BlockOwnerDeletion: ptr.To(false),
	}})
	return o
}

// appendCRILog appends lines to path in the CRI log format; with no lines it only creates the
// file.
func appendCRILog(path string, at time.Time, lines ...string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return err
	}
	// One write: a follower never sees part of the lines.
	_, err = f.WriteString(criLog(at, lines...))
	return errors.Join(err, f.Close())
}

// criLog renders lines in the CRI log format kwok (with a kubelet's CRI log reader) parses:
// "TIME stdout F TEXT", one per line of text.
func criLog(at time.Time, lines ...string) string {
	var b strings.Builder
	ts := at.UTC().Format(time.RFC3339Nano)
	for _, l := range lines {
		for part := range strings.SplitSeq(strings.TrimSuffix(l, "\n"), "\n") {
			fmt.Fprintf(&b, "%s stdout F %s\n", ts, part)
		}
	}
	return b.String()
}

// kwokLogsConfig is the ClusterLogs of kwok's configuration: every pod's containers show file.
func kwokLogsConfig(file string) ([]byte, error) {
	return yaml.Marshal(map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "ClusterLogs",
		"metadata":   map[string]any{"name": "gantry-default-pod-logs"},
		// No selector: every pod; a Logs object of the pod's own comes first.
		"spec": map[string]any{"logs": []any{map[string]any{"logsFile": file, "follow": true}}},
	})
}

// writeKwokLogs writes the default pod logs and the configuration that serves them.
func (c *Cluster) writeKwokLogs() error {
	file, err := filepath.Abs(c.PodLogsFile(DefaultPodLogs))
	if err != nil {
		return err
	}
	lines := append([]string{"simulated container of the Gantry local cluster: every pod shows these lines, from " + file}, defaultPodLogLines...)
	if err := writeFileAtomic(file, []byte(criLog(time.Now(), lines...)), 0o644); err != nil {
		return err
	}
	cfg, err := kwokLogsConfig(file)
	if err != nil {
		return err
	}
	return writeFileAtomic(c.path("config", kwokLogsConfigFile), cfg, 0o644)
}

// installKwokLogsCRD installs kwok's Logs CRD at the pinned version, from the module cache.
func (c *Cluster) installKwokLogsCRD(ctx context.Context) error {
	dir, err := c.moduleDir("sigs.k8s.io/kwok", "KWOK_VERSION")
	if err != nil {
		return err
	}
	crds, err := manifest.ReadPath(filepath.Join(dir, "kustomize", "crd", "bases", "kwok.x-k8s.io_logs.yaml"))
	if err != nil {
		return err
	}
	cl, err := c.Client()
	if err != nil {
		return err
	}
	return installCRDs(ctx, cl, crds)
}

// checkKwokServesLogs asks kwok, as the apiserver does (HTTPS, verifying its certificate with the
// cluster CA), for the logs of a pod no rule but the default one serves. Only a warning: up also
// repairs clusters whose kwok an older checkout started, without logs.
func (c *Cluster) checkKwokServesLogs(ctx context.Context) {
	pr := probe{url: localURL("https", c.Settings.Ports.Kwok) + "/containerLogs/default/gantry-logs-check/" + logsCheckContainer}
	if c.pki != nil {
		pr.roots = c.pki.roots
	}
	if err := waitFor(ctx, 5*time.Second, "kwok serving pod logs", pr.check); err != nil {
		c.logf("  %-24s warning: `kubectl logs` will not work: %v (started by an older checkout? run down and up)", "kwok", err)
	}
}
