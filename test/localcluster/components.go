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
	_ "embed"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

//go:embed kwok-stages.yaml
var kwokStages string

// KwokStages returns the Stage manifests with the default pod run time filled in.
func KwokStages(podDuration time.Duration) string { return kwokStagesFor(podDuration, false) }

// kwokStagesFor fills in the pod run time and the node heartbeat's period (throughputHeartbeat
// for a throughput cluster).
func kwokStagesFor(podDuration time.Duration, throughput bool) string {
	beat := defaultHeartbeat
	if throughput {
		beat = throughputHeartbeat
	}
	return strings.NewReplacer(
		"__POD_DURATION_MS__", strconv.FormatInt(podDuration.Milliseconds(), 10),
		"__POD_DURATION__", podDuration.String(),
		"__HEARTBEAT_MS__", strconv.FormatInt(beat.delay.Milliseconds(), 10),
		"__HEARTBEAT_JITTER_MS__", strconv.FormatInt(beat.jitter.Milliseconds(), 10),
	).Replace(kwokStages)
}

func localURL(scheme string, port int) string { return fmt.Sprintf("%s://127.0.0.1:%d", scheme, port) }

func hostPort(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// components lists the processes in start order with their flags.
func (c *Cluster) components() []component {
	return []component{
		c.etcdComponent(), c.apiserverComponent(), c.controllerManagerComponent(), c.schedulerComponent(),
		c.kwokComponent(), c.jobSetComponent(), c.gantryComponent(), c.gantryReplicaComponent(), c.kueueComponent(),
		c.uiComponent(), c.progressReporterComponent(),
	}
}

func (c *Cluster) bin(name string) string { return filepath.Join(c.BinDir, name) }

func (c *Cluster) pkiFile(name string) string { return c.path("pki", name) }

// controllerEnv points controller-runtime based components at the cluster.
func (c *Cluster) controllerEnv() []string { return []string{"KUBECONFIG=" + c.Kubeconfig()} }

func (c *Cluster) etcdComponent() component {
	p := c.Settings.Ports
	etcdURL, peerURL := localURL("http", p.Etcd), localURL("http", p.EtcdPeer)
	return component{
		name: "etcd", binary: c.bin("etcd"), ports: []int{p.Etcd, p.EtcdPeer}, enabled: true,
		env: c.toolchainEnv(),
		args: []string{
			"--name", "default", "--data-dir", c.path("etcd"),
			"--listen-client-urls", etcdURL, "--advertise-client-urls", etcdURL,
			"--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL,
			"--initial-cluster", "default=" + peerURL,
			// A throw-away cluster: durability is not worth the fsyncs on a busy disk.
			"--unsafe-no-fsync", "--log-level", "warn",
		},
		probe:        probe{url: etcdURL + "/health"},
		startTimeout: 30 * time.Second,
	}
}

func (c *Cluster) apiserverComponent() component {
	p := c.Settings.Ports
	pr := probe{url: localURL("https", p.APIServer) + "/readyz"}
	if c.pki != nil {
		pr.roots, pr.token = c.pki.roots, c.pki.token
	}
	var audit []string
	var prepare func(context.Context) error
	if c.Settings.Audit {
		audit = []string{
			"--audit-policy-file", c.path("config", "audit-policy.yaml"), "--audit-log-path", c.AuditLog(),
			"--audit-log-format", "json", "--audit-log-maxsize", "0", "--audit-log-mode", "blocking",
		}
		prepare = c.writeAuditPolicy
	}
	return component{
		name: "kube-apiserver", binary: c.bin("kube-apiserver"), ports: []int{p.APIServer}, enabled: true,
		env:     c.toolchainEnv(),
		prepare: prepare,
		args: append(append(audit, []string{
			"--etcd-servers", localURL("http", p.Etcd),
			"--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", strconv.Itoa(p.APIServer),
			"--tls-cert-file", c.pkiFile("apiserver.crt"), "--tls-private-key-file", c.pkiFile("apiserver.key"),
			"--client-ca-file", c.pkiFile("ca.crt"), "--token-auth-file", c.pkiFile("tokens.csv"),
			"--authorization-mode", "RBAC",
			"--service-account-issuer", "https://kubernetes.default.svc",
			"--service-account-key-file", c.pkiFile("sa.pub"), "--service-account-signing-key-file", c.pkiFile("sa.key"),
			"--service-cluster-ip-range", "10.96.0.0/16", "--allow-privileged=true",
			// With a loopback advertise address the kubernetes Endpoints would be rejected every 10s.
			"--endpoint-reconciler-type", "none",
			// pods/log is proxied to the node's "kubelet": kwok, at the node's InternalIP 127.0.0.1
			// and its daemonEndpoints port (ensureNode), over HTTPS with a certificate of the CA.
			"--kubelet-preferred-address-types", "InternalIP,Hostname",
			"--kubelet-certificate-authority", c.pkiFile("ca.crt"),
			"--kubelet-client-certificate", c.pkiFile(kubeletClientCert.File + ".crt"),
			"--kubelet-client-key", c.pkiFile(kubeletClientCert.File + ".key"),
			"--cert-dir", c.path("certs", "kube-apiserver"), "--profiling=false",
		}...), c.apiserverTuning()...),
		probe:        pr,
		startTimeout: 90 * time.Second,
		install:      c.bootstrap,
	}
}

func (c *Cluster) controllerManagerComponent() component {
	p := c.Settings.Ports
	return component{
		name: "kube-controller-manager", binary: c.bin("kube-controller-manager"), ports: []int{p.ControllerManager}, enabled: true,
		env: c.toolchainEnv(),
		args: append([]string{
			"--kubeconfig", c.Kubeconfig(), "--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(p.ControllerManager),
			"--leader-elect=false",
			"--service-account-private-key-file", c.pkiFile("sa.key"), "--root-ca-file", c.pkiFile("ca.crt"),
			"--cert-dir", c.path("certs", "kube-controller-manager"),
			"--concurrent-job-syncs", "10",
			// PVCs (torchtune's shared initializer volume) get hostPath volumes under /tmp: the
			// in-tree provisioner for development clusters, see the default StorageClass.
			"--enable-hostpath-provisioner",
		}, c.controllerManagerTuning()...),
		probe:        probe{url: localURL("https", p.ControllerManager) + "/healthz"},
		startTimeout: 60 * time.Second,
	}
}

func (c *Cluster) schedulerComponent() component {
	p := c.Settings.Ports
	return component{
		name: "kube-scheduler", binary: c.bin("kube-scheduler"), ports: []int{p.Scheduler}, enabled: true,
		env:          c.toolchainEnv(),
		args:         c.schedulerArgs(),
		probe:        probe{url: localURL("https", p.Scheduler) + "/healthz"},
		startTimeout: 60 * time.Second,
		prepare:      func(context.Context) error { return c.writeSchedulerConfig() },
	}
}

func (c *Cluster) kwokComponent() component {
	p := c.Settings.Ports
	return component{
		name: "kwok", binary: c.bin("kwok"), ports: []int{p.Kwok}, enabled: true,
		env: c.toolchainEnv(),
		args: append(c.kwokConfigArgs(),
			"--kubeconfig", c.Kubeconfig(),
			"--manage-nodes-with-annotation-selector", nodeAnnotation+"=fake",
			"--node-lease-duration-seconds", c.kwokLeaseSeconds(),
			// One port for HTTP (the health probe) and HTTPS (pod logs, for the apiserver): kwok
			// tells them apart by the first bytes of each connection.
			"--server-address", hostPort(p.Kwok),
			"--tls-cert-file", c.pkiFile(kwokServingCert.File+".crt"), "--tls-private-key-file", c.pkiFile(kwokServingCert.File+".key"),
			// Per-pod Logs objects (SetPodLogs) are read from the apiserver; the ClusterLogs
			// serving every other pod is in the configuration.
			"--enable-crds", "Logs",
		),
		probe:        probe{url: localURL("http", p.Kwok) + "/healthz"},
		startTimeout: 60 * time.Second,
		prepare:      c.prepareKwok,
		install: func(ctx context.Context) error {
			c.checkKwokServesLogs(ctx)
			return c.waitNodesReady(ctx)
		},
	}
}

// prepareKwok writes kwok's configuration (the Stages, the default pod logs) and installs the
// Logs CRD it watches.
func (c *Cluster) prepareKwok(ctx context.Context) error {
	if err := c.writeKwokConfig(); err != nil {
		return err
	}
	return c.installKwokLogsCRD(ctx)
}

func (c *Cluster) writeKwokConfig() error {
	if err := writeFileAtomic(c.path("config", "kwok-stages.yaml"), []byte(kwokStagesFor(c.Settings.PodDuration.Duration, c.Settings.Throughput)), 0o644); err != nil {
		return err
	}
	if c.Settings.Throughput {
		if err := writeFileAtomic(c.path("config", kwokThroughputConfigFile), []byte(kwokThroughputConfig), 0o644); err != nil {
			return err
		}
	}
	return c.writeKwokLogs()
}

func (c *Cluster) jobSetComponent() component {
	p := c.Settings.Ports
	return component{
		name: "jobset", binary: c.bin("jobset"), ports: []int{p.JobSetWebhook, p.JobSetHealth}, enabled: true,
		args:         []string{"--config", c.path("config", "jobset.yaml"), "--kubeconfig", c.Kubeconfig()},
		env:          append(c.controllerEnv(), c.toolchainEnv()...),
		probe:        probe{url: localURL("http", p.JobSetHealth) + "/readyz"},
		startTimeout: 90 * time.Second,
		prepare:      c.prepareJobSet,
	}
}

func (c *Cluster) gantryComponent() component {
	p := c.Settings.Ports
	return component{
		name: "gantry-manager", binary: c.path("bin", "manager"),
		ports:   []int{p.GantryWebhook, p.GantryHealth, p.GantryMetrics, p.GantryStatus},
		enabled: !c.Settings.WithoutGantry,
		args: append([]string{
			"--config", c.path("config", "gantry.yaml"),
			"--webhook-cert-dir", c.path("certs", "gantry-manager"),
		}, c.ManagerArgs...),
		// As the downward API would set it: the process restarted under this name is the same pod.
		env:          append(c.managerEnv("gantry-manager"), c.ManagerEnv...),
		probe:        probe{url: localURL("http", p.GantryHealth) + "/readyz"},
		startTimeout: 120 * time.Second,
		prepare:      c.prepareGantry,
		install:      c.installRuntimes,
	}
}

func (c *Cluster) kueueComponent() component {
	p := c.Settings.Ports
	return component{
		name: "kueue", binary: c.bin("kueue"), ports: []int{p.KueueWebhook, p.KueueHealth}, enabled: c.Settings.Kueue,
		args:         []string{"--config", c.path("config", "kueue.yaml")},
		env:          c.controllerEnv(),
		probe:        probe{url: localURL("http", p.KueueHealth) + "/readyz"},
		startTimeout: 120 * time.Second,
		prepare:      c.prepareKueue,
	}
}
