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
)

func (c *Cluster) component(name string) (component, error) {
	for _, comp := range c.components() {
		if comp.name == name {
			return comp, nil
		}
	}
	return component{}, fmt.Errorf("unknown component %q", name)
}

// Kill ends a component's process with SIGKILL, as a crash or an OOM kill would, and waits
// until it is gone.
func (c *Cluster) Kill(name string) error {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	rec := c.record(name)
	defer func() { _ = os.Remove(c.pidFile(name)) }()
	if !rec.alive() {
		return nil
	}
	return sigkill(name, rec)
}

// Terminate stops a component with SIGTERM, as a rolling update or a node drain does, and waits
// until it is gone (SIGKILL after grace).
func (c *Cluster) Terminate(name string, grace time.Duration) error {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	_, err = c.stopRecorded(name, grace)
	return err
}

// PID is the process ID of a running component, 0 if it does not run.
func (c *Cluster) PID(name string) int {
	if rec := c.record(name); rec.alive() {
		return rec.PID
	}
	return 0
}

// Alive reports whether a component's process runs.
func (c *Cluster) Alive(name string) bool { return c.record(name).alive() }

// Restart starts a component that does not run, as a kubelet restarts a crashed container: with
// the binary and configuration Up prepared (the manager is not rebuilt), without waiting for it
// to become healthy.
func (c *Cluster) Restart(name string) error {
	comp, err := c.component(name)
	if err != nil {
		return err
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	if c.record(name).alive() {
		return nil
	}
	// A killed process's listeners can outlive the moment it stops showing as alive by a little.
	if err := waitPortsFree(comp, 10*time.Second); err != nil {
		return err
	}
	_, err = c.startProcess(comp.name, comp.binary, comp.args, comp.env)
	return err
}

func waitPortsFree(comp component, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for _, p := range comp.ports {
		for !portFree(p) {
			if time.Now().After(deadline) {
				return fmt.Errorf("%s: port %d on 127.0.0.1 is still in use %s after the process stopped", comp.name, p, timeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return nil
}

// WaitHealthy waits until a component passes its health probe.
func (c *Cluster) WaitHealthy(ctx context.Context, name string, timeout time.Duration) error {
	comp, err := c.component(name)
	if err != nil {
		return err
	}
	return waitFor(ctx, timeout, name, comp.probe.check)
}
