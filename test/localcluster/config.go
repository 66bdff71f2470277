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

// Package localcluster runs a Kubernetes control plane on 127.0.0.1 as plain processes: etcd,
// kube-apiserver, kube-controller-manager, kube-scheduler, kwok simulating GPU nodes, the JobSet
// controller, the Gantry manager built from source and, optionally, Kueue. Everything it starts
// is recorded under one state directory (kubeconfig, logs, PIDs, certificates, configuration),
// so later runs report on, repair or stop exactly those processes.
package localcluster

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Ports are the TCP ports the components listen on, all on 127.0.0.1.
type Ports struct {
	Etcd              int `json:"etcd"`
	EtcdPeer          int `json:"etcdPeer"`
	APIServer         int `json:"apiServer"`
	ControllerManager int `json:"controllerManager"`
	Scheduler         int `json:"scheduler"`
	Kwok              int `json:"kwok"`
	JobSetWebhook     int `json:"jobSetWebhook"`
	JobSetHealth      int `json:"jobSetHealth"`
	GantryWebhook     int `json:"gantryWebhook"`
	GantryHealth      int `json:"gantryHealth"`
	GantryMetrics     int `json:"gantryMetrics"`
	GantryStatus      int `json:"gantryStatus"`
	KueueWebhook      int `json:"kueueWebhook"`
	KueueHealth       int `json:"kueueHealth"`
	// GantryUI is `gantry ui`'s address (Settings.UI); settings saved before it existed get the
	// default shifted as their apiserver's port was (LoadSettings).
	GantryUI int `json:"gantryUI,omitempty"`
	// ProgressReporter is the health address of the progress reporter (Settings.Progress);
	// settings saved before it existed get the default shifted as GantryUI.
	ProgressReporter int `json:"progressReporter,omitempty"`
}

// DefaultPorts are the well-known ports of each component, moved where two components would
// otherwise share one (JobSet, Gantry and Kueue all default to 9443 and 8081).
func DefaultPorts() Ports {
	return Ports{
		Etcd: 2379, EtcdPeer: 2380, APIServer: 6443, ControllerManager: 10257, Scheduler: 10259, Kwok: 10247,
		JobSetWebhook: 9444, JobSetHealth: 8082,
		GantryWebhook: 9443, GantryHealth: 8081, GantryMetrics: 8443, GantryStatus: 10443,
		KueueWebhook: 9445, KueueHealth: 8083, GantryUI: 8090, ProgressReporter: 8091,
	}
}

// Offset returns the ports shifted by n, so a second cluster (the e2e suite's) can run beside a
// developer's.
func (p Ports) Offset(n int) Ports {
	for _, f := range p.Fields() {
		*f.Port += n
	}
	return p
}

// PortField is one component's port, by the name its --NAME-port flag and errors use.
type PortField struct {
	Name string
	Port *int
}

// Fields lists every port of p, in a fixed order.
func (p *Ports) Fields() []PortField {
	return []PortField{
		{"etcd", &p.Etcd}, {"etcd-peer", &p.EtcdPeer}, {"apiserver", &p.APIServer},
		{"controller-manager", &p.ControllerManager}, {"scheduler", &p.Scheduler}, {"kwok", &p.Kwok},
		{"jobset-webhook", &p.JobSetWebhook}, {"jobset-health", &p.JobSetHealth},
		{"gantry-webhook", &p.GantryWebhook}, {"gantry-health", &p.GantryHealth},
		{"gantry-metrics", &p.GantryMetrics}, {"gantry-status", &p.GantryStatus},
		{"kueue-webhook", &p.KueueWebhook}, {"kueue-health", &p.KueueHealth}, {"gantry-ui", &p.GantryUI},
		{"progress-reporter", &p.ProgressReporter},
	}
}

// Nodes shape the simulated GPU nodes.
type Nodes struct {
	Count       int    `json:"count"`
	GPUsPerNode int    `json:"gpusPerNode"`
	CPU         string `json:"cpu"`
	Memory      string `json:"memory"`
	// NodesPerRack groups nodes into racks (topology labels); two racks make a block.
	NodesPerRack int `json:"nodesPerRack"`
}

// Settings are what a cluster was brought up with; they are saved in the state directory so
// status and down use the ports of the cluster that runs, whatever flags they get.
type Settings struct {
	Ports Ports `json:"ports"`
	Nodes Nodes `json:"nodes"`
	// PodDuration is how long a simulated pod runs before it succeeds, unless annotated.
	PodDuration Duration `json:"podDuration"`
	// Kueue also runs the Kueue controller.
	Kueue bool `json:"kueue"`
	// UI also serves `gantry ui` (kubeconfig mode, history in ConfigMaps) on 127.0.0.1; UILink
	// is its login link.
	UI bool `json:"ui,omitempty"`
	// Progress also runs the progress reporter: running TrainJob pods report progress, ETA and
	// a simulated loss to the status server as training code would (progress-reporter).
	Progress bool `json:"progress,omitempty"`
	// Audit makes the apiserver write an audit log (logs/audit.log) of the writes to the objects
	// Gantry owns and of every request of the manager (auditPolicy): the reliability suite's
	// record of who wrote what, and the e2e suite's of which RBAC rules the manager uses.
	Audit bool `json:"audit,omitempty"`
	// WithoutGantry leaves Gantry out entirely: no manager, CRDs, webhooks nor runtimes. A worker
	// of the multi-cluster layout is started so (--worker-without-gantry) to show that the
	// MultiKueue suite fails, and how, when a worker cannot run TrainJobs.
	WithoutGantry bool `json:"withoutGantry,omitempty"`
	// MultiKueue makes this cluster's Kueue a MultiKueue manager (multiKueueConfig): the manager
	// of the multi-cluster layout (Fleet), which dispatches queued jobs to the workers.
	MultiKueue bool `json:"multiKueue,omitempty"`
	// Throughput tunes the cluster's own processes for pod turnover (throughput.go): the scale
	// benchmark's. Node Leases are then renewed every 100 s, too seldom for the reliability
	// suite's outage test, and nodes' conditions refreshed every 5 to 6 minutes.
	Throughput bool `json:"throughput,omitempty"`
}

// Duration is a time.Duration that reads and writes as "5s".
type Duration struct{ time.Duration }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a string duration.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	v, err := time.ParseDuration(s)
	d.Duration = v
	return err
}

// DefaultSettings are four nodes of eight GPUs and pods that run five seconds; no audit log
// (the e2e and reliability suites turn it on: it grows without rotation).
func DefaultSettings() Settings {
	return Settings{
		Ports:       DefaultPorts(),
		Nodes:       Nodes{Count: 4, GPUsPerNode: 8, CPU: "96", Memory: "1Ti", NodesPerRack: 2},
		PodDuration: Duration{5 * time.Second},
	}
}

// Validate checks settings before anything starts.
func (s Settings) Validate() error {
	var errs []error
	seen := map[int]string{}
	p := s.Ports
	for _, f := range p.Fields() {
		if *f.Port < 1 || *f.Port > 65535 {
			errs = append(errs, fmt.Errorf("port %s: %d is not between 1 and 65535", f.Name, *f.Port))
		}
		if other, dup := seen[*f.Port]; dup {
			errs = append(errs, fmt.Errorf("ports %s and %s are both %d", other, f.Name, *f.Port))
		}
		seen[*f.Port] = f.Name
	}
	if s.Nodes.Count < 1 || s.Nodes.Count > MaxNodes {
		errs = append(errs, fmt.Errorf("nodes: %d, want 1 to %d", s.Nodes.Count, MaxNodes))
	}
	if s.Nodes.GPUsPerNode < 0 {
		errs = append(errs, fmt.Errorf("gpus per node: %d, want 0 or more", s.Nodes.GPUsPerNode))
	}
	if s.Nodes.NodesPerRack < 1 {
		errs = append(errs, fmt.Errorf("nodes per rack: %d, want at least 1", s.Nodes.NodesPerRack))
	}
	if s.MultiKueue && !s.Kueue {
		errs = append(errs, errors.New("a MultiKueue manager runs Kueue: set Kueue too"))
	}
	if s.PodDuration.Duration < 0 {
		errs = append(errs, fmt.Errorf("pod duration: %s, want 0 or more", s.PodDuration))
	}
	return errors.Join(errs...)
}

// Cluster is a local cluster rooted at a state directory.
type Cluster struct {
	// Root is the Gantry checkout: the manager is built from it, manifests are read from it.
	Root string
	// StateDir holds everything the cluster writes.
	StateDir string
	// BinDir holds the toolchain's binaries (hack/toolchain.sh links them into <root>/bin).
	BinDir string
	// KeepData keeps etcd's data when the cluster starts from nothing.
	KeepData bool
	// Out receives one line per step.
	Out io.Writer
	// ManagerEnv is added to the manager's environment when it starts (the reliability suite
	// injects faults through it).
	ManagerEnv []string
	// ManagerArgs are added to the manager's command line (the scale run serves its profiles).
	ManagerArgs []string
	// ManagerBuildTags are the build tags of the manager: "faults" for the reliability suite,
	// whose ManagerEnv injects faults only a manager built with them has.
	ManagerBuildTags []string

	Settings Settings

	clusterState
}

// DefaultStateDir is where a checkout's cluster keeps its state.
func DefaultStateDir(root string) string { return filepath.Join(root, ".state", "local-cluster") }

func (c *Cluster) path(elem ...string) string {
	return filepath.Join(append([]string{c.StateDir}, elem...)...)
}

// Kubeconfig is the administrator kubeconfig of the cluster.
func (c *Cluster) Kubeconfig() string { return c.path("kubeconfig") }

func (c *Cluster) logf(format string, args ...any) {
	if c.Out != nil {
		_, _ = fmt.Fprintf(c.Out, format+"\n", args...)
	}
}

const settingsFile = "cluster.json"

// LoadSettings reads the settings the cluster in the state directory was brought up with.
func (c *Cluster) LoadSettings() (Settings, bool, error) {
	data, err := os.ReadFile(c.path(settingsFile))
	if errors.Is(err, os.ErrNotExist) {
		return Settings{}, false, nil
	}
	if err != nil {
		return Settings{}, false, err
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return Settings{}, false, fmt.Errorf("%s: %w", c.path(settingsFile), err)
	}
	if s.Ports.GantryUI == 0 {
		d := DefaultPorts()
		s.Ports.GantryUI = d.GantryUI + s.Ports.APIServer - d.APIServer
	}
	if s.Ports.ProgressReporter == 0 {
		d := DefaultPorts()
		s.Ports.ProgressReporter = d.ProgressReporter + s.Ports.APIServer - d.APIServer
	}
	return s, true, nil
}

func (c *Cluster) saveSettings() error {
	data, err := json.MarshalIndent(c.Settings, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomic(c.path(settingsFile), append(data, '\n'), 0o644)
}

// Versions reads hack/versions.env (NAME=value lines).
func Versions(root string) (map[string]string, error) {
	f, err := os.Open(filepath.Join(root, "hack", "versions.env"))
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	out := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if k, v, ok := strings.Cut(line, "="); ok {
			out[k] = v
		}
	}
	return out, sc.Err()
}
