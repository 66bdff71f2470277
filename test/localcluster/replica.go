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
	"os"
	"time"

	"sigs.k8s.io/yaml"
)

// ManagerReplica is the second Gantry manager, started on demand (StartManagerReplica) to run
// two replicas under leader election, as a production install does.
const ManagerReplica = "gantry-manager-2"

// replicaPortShift moves the second replica's ports off the first one's: no default port of the
// cluster is 10 above one of the manager's.
const replicaPortShift = 10

func (c *Cluster) gantryReplicaComponent() component {
	first := c.gantryComponent()
	p := c.Settings.Ports
	health := p.GantryHealth + replicaPortShift
	return component{
		name: ManagerReplica, binary: first.binary,
		ports: []int{p.GantryWebhook + replicaPortShift, health, p.GantryMetrics + replicaPortShift, p.GantryStatus + replicaPortShift},
		// Not started by Up: StartManagerReplica writes its configuration and starts it.
		enabled: false,
		args: []string{
			"--config", c.path("config", "gantry-2.yaml"),
			"--webhook-cert-dir", c.path("certs", ManagerReplica),
		},
		env:          append(c.managerEnv(ManagerReplica), c.ManagerEnv...),
		probe:        probe{url: localURL("http", health) + "/readyz"},
		startTimeout: 120 * time.Second,
	}
}

// StartManagerReplica starts the second manager replica: the first one's Configuration on its
// own ports, the same identity, certificate Secret and lease. It waits until it is healthy.
// leaderElect false is a defect on purpose (two managers reconciling at once), for the suite
// that must catch it.
func (c *Cluster) StartManagerReplica(ctx context.Context, leaderElect bool) error {
	data, err := os.ReadFile(c.path("config", "gantry.yaml"))
	if err != nil {
		return fmt.Errorf("the first manager's configuration: %w", err)
	}
	doc := map[string]any{}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return err
	}
	p := c.Settings.Ports
	set := func(section, key string, v any) {
		m, _ := doc[section].(map[string]any)
		if m == nil {
			m = map[string]any{}
			doc[section] = m
		}
		m[key] = v
	}
	set("webhook", "port", p.GantryWebhook+replicaPortShift)
	set("health", "healthProbeBindAddress", hostPort(p.GantryHealth+replicaPortShift))
	set("metrics", "bindAddress", hostPort(p.GantryMetrics+replicaPortShift))
	set("statusServer", "port", p.GantryStatus+replicaPortShift)
	set("leaderElection", "leaderElect", leaderElect)
	if err := c.writeConfig("gantry-2.yaml", doc); err != nil {
		return err
	}
	if err := c.Restart(ManagerReplica); err != nil {
		return err
	}
	return c.WaitHealthy(ctx, ManagerReplica, 2*time.Minute)
}
