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
	"time"
)

// ProgressReporter is the component that reports progress for simulated pods
// (test/localcluster/progress-reporter), with Settings.Progress.
const ProgressReporter = "progress-reporter"

func (c *Cluster) progressReporterComponent() component {
	p := c.Settings.Ports
	return component{
		name: ProgressReporter, binary: c.path("bin", ProgressReporter), ports: []int{p.ProgressReporter},
		enabled: c.Settings.Progress,
		args: []string{
			"--kubeconfig", c.Kubeconfig(), "--health-address", hostPort(p.ProgressReporter),
			// The curve ends when kwok ends the pod: the Stages' default duration.
			"--pod-duration", c.Settings.PodDuration.String(),
		},
		probe:        probe{url: localURL("http", p.ProgressReporter) + "/healthz"},
		startTimeout: 60 * time.Second,
		prepare:      c.buildProgressReporter,
	}
}

func (c *Cluster) buildProgressReporter(ctx context.Context) error {
	const pkg = "./test/localcluster/progress-reporter"
	c.logf("  %-24s building %s", ProgressReporter, pkg)
	build := exec.CommandContext(ctx, "go", "build", "-o", c.path("bin", ProgressReporter), pkg)
	build.Dir = c.Root
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %w\n%s", pkg, err, out)
	}
	return nil
}

// EnableProgress starts the progress reporter on a running cluster that runs without it (a
// suite that needs reports on a cluster someone else brought up), and keeps it in the saved
// settings so that status and down know of it.
func (c *Cluster) EnableProgress(ctx context.Context) error {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	c.Settings.Progress = true
	if err := c.saveSettings(); err != nil {
		return err
	}
	return c.ensureComponent(ctx, c.progressReporterComponent())
}
