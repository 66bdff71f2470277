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
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// uiTokenFile holds the UI's login token: the link stays the same across restarts of the UI.
const uiTokenFile = "ui-token"

// uiComponent is gantry-ui (the server of `gantry ui`) built from the checkout, serving the cluster with the
// administrator's kubeconfig on 127.0.0.1, its curves kept in ConfigMaps.
func (c *Cluster) uiComponent() component {
	p := c.Settings.Ports
	return component{
		name: "gantry-ui", binary: c.path("bin", "gantry-ui"), ports: []int{p.GantryUI}, enabled: c.Settings.UI,
		args: []string{
			"--kubeconfig", c.Kubeconfig(), "--address", hostPort(p.GantryUI),
			"--token-file", c.path("config", uiTokenFile), "--history", "configmap",
		},
		probe:        probe{url: localURL("http", p.GantryUI) + "/healthz"},
		startTimeout: 60 * time.Second,
		prepare:      c.buildGantryUI,
	}
}

func (c *Cluster) buildGantryUI(ctx context.Context) error {
	c.logf("  %-24s building ./cmd/gantry-ui", "gantry-ui")
	build := exec.CommandContext(ctx, "go", "build", "-o", c.path("bin", "gantry-ui"), "./cmd/gantry-ui")
	build.Dir = c.Root
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/gantry-ui: %w\n%s", err, out)
	}
	return nil
}

// UILink is the UI's login link, once it has started (Settings.UI).
func (c *Cluster) UILink() (string, error) {
	token, err := os.ReadFile(c.path("config", uiTokenFile))
	if err != nil {
		return "", fmt.Errorf("the UI's login token: %w (is the cluster up with --ui?)", err)
	}
	return "http://127.0.0.1:" + strconv.Itoa(c.Settings.Ports.GantryUI) + "/jobs?token=" + strings.TrimSpace(string(token)), nil
}
