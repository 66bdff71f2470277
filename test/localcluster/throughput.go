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
	"strconv"
	"time"
)

// A throughput cluster (Settings.Throughput) trades the cluster's own timeliness for pod
// turnover on two CPUs: the scale benchmark's 40,000 pods. Nothing here touches Gantry's
// processes, whose CPU and memory that benchmark measures. The default cluster keeps the
// settings the e2e and reliability suites rely on: kwok's defaults (it serves pod logs) and node
// Leases renewed every 10 s, which a control-plane outage test needs to see nodes recover.

// heartbeat is how often kwok refreshes a Ready node's conditions: at a random time between
// delay and jitter (kwok's Stage delay).
type heartbeat struct{ delay, jitter time.Duration }

var (
	defaultHeartbeat = heartbeat{delay: 60 * time.Second, jitter: 70 * time.Second}
	// Every 5 to 6 minutes, as a kubelet reports an unchanged status: every minute, 500 nodes'
	// patches were 8 writes a second, each sent to every node watcher.
	throughputHeartbeat = heartbeat{delay: 5 * time.Minute, jitter: 6 * time.Minute}
)

const (
	// kwokThroughputConfigFile holds the KwokConfiguration of a throughput cluster.
	kwokThroughputConfigFile = "kwok-throughput.yaml"
	// kwokThroughputConfig raises kwok's pod Stage pool: each step (a status patch, an event)
	// waits for the apiserver, and the default 4 workers capped a loaded cluster near 8 pods a
	// second. kwok reads this document without its API defaults (an unset bool is false), so
	// the options whose defaults matter are spelled out: enableDebuggingHandlers serves pod logs.
	kwokThroughputConfig = `apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  enableDebuggingHandlers: true
  enableProfilingHandler: true
  enablePodsOnNodeSyncListPager: true
  podsOnNodeSyncParallelism: 1
  podPlayStageParallelism: 32
  nodePlayStageParallelism: 4
  nodeLeaseParallelism: 4
`
)

// toolchainEnv is the environment of the cluster's own processes. A throughput cluster's run at
// GOGC=400: on two busy CPUs the apiserver spent a tenth of its CPU collecting garbage at the
// default; GOMEMLIMIT bounds the larger heap (the apiserver held 3 GiB over 4,000 pods).
func (c *Cluster) toolchainEnv() []string {
	if !c.Settings.Throughput {
		return nil
	}
	return []string{"GOGC=400", "GOMEMLIMIT=4GiB"}
}

// apiserverTuning are the apiserver's flags in a throughput cluster: a delete-collection (the
// scale run removes each wave's 4,000 finished pods at once) runs on 8 workers instead of one,
// which on the loaded machine outlasted the request timeout.
func (c *Cluster) apiserverTuning() []string {
	if !c.Settings.Throughput {
		return nil
	}
	return []string{"--delete-collection-workers", "8"}
}

// controllerManagerTuning are the controller manager's flags that differ in a throughput cluster.
func (c *Cluster) controllerManagerTuning() []string {
	if !c.Settings.Throughput {
		return []string{"--controllers", "*", "--kube-api-qps", "100", "--kube-api-burst", "200"}
	}
	return []string{
		// Nothing reads Endpoints or EndpointSlices here (no kube-proxy, no DNS; the webhooks are
		// URLs): their controllers rewrote both on every pod's Ready change, a quarter of the
		// apiserver's writes in the scale run.
		"--controllers", "*,-endpoints-controller,-endpointslice-controller,-endpointslice-mirroring-controller",
		// The job controller creates and untracks every pod and writes every Job's status: at
		// 100 QPS the controllers together capped the run near 25 pods a second.
		"--kube-api-qps", "1000", "--kube-api-burst", "2000",
		// Node Leases are renewed every 100 s (kwokLeaseSeconds): unhealthy after three misses.
		"--node-monitor-grace-period", "5m",
	}
}

// kwokLeaseSeconds is kwok's --node-lease-duration-seconds; it renews each Lease every quarter.
// At 40 s, 500 nodes' renewals were 50 writes a second, the largest share of the scale run's.
func (c *Cluster) kwokLeaseSeconds() string {
	if c.Settings.Throughput {
		return "400"
	}
	return "40"
}

// kwokConfigArgs are kwok's --config flags: its Stages, the default pod logs and, in a
// throughput cluster, its KwokConfiguration.
func (c *Cluster) kwokConfigArgs() []string {
	args := []string{"--config", c.path("config", "kwok-stages.yaml"), "--config", c.path("config", kwokLogsConfigFile)}
	if c.Settings.Throughput {
		args = append(args, "--config", c.path("config", kwokThroughputConfigFile))
	}
	return args
}

// schedulerArgs configure the scheduler. A throughput cluster's reads a configuration file (its
// --kubeconfig and --leader-elect flags are then ignored) for the client's rate: the default 50
// QPS, a binding and an event per pod, capped the cluster near 25 pods a second.
func (c *Cluster) schedulerArgs() []string {
	p := c.Settings.Ports
	common := []string{"--bind-address", "127.0.0.1", "--secure-port", strconv.Itoa(p.Scheduler), "--cert-dir", c.path("certs", "kube-scheduler")}
	if !c.Settings.Throughput {
		return append([]string{"--kubeconfig", c.Kubeconfig(), "--leader-elect=false"}, common...)
	}
	return append([]string{"--config", c.path("config", "kube-scheduler.yaml")}, common...)
}

// writeSchedulerConfig writes a throughput cluster's scheduler configuration.
func (c *Cluster) writeSchedulerConfig() error {
	if !c.Settings.Throughput {
		return nil
	}
	return c.writeConfig("kube-scheduler.yaml", map[string]any{
		"apiVersion":       "kubescheduler.config.k8s.io/v1",
		"kind":             "KubeSchedulerConfiguration",
		"clientConnection": map[string]any{"kubeconfig": c.Kubeconfig(), "qps": 1000, "burst": 2000},
		"leaderElection":   map[string]any{"leaderElect": false},
	})
}
