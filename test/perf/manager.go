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

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/gantry-ml/gantry/test/util"
)

// buildManager compiles ./cmd/manager into dir as the Dockerfile does (static, trimmed,
// stripped: the binary's mapped pages count in its RSS) and returns the binary's path.
func buildManager(dir string) (string, error) {
	bin := filepath.Join(dir, "manager")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, "./cmd/manager")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Dir = util.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the manager: %w: %s", err, out)
	}
	return bin, nil
}

// managerProcess is one run of the manager binary.
type managerProcess struct {
	cmd     *exec.Cmd
	log     *os.File
	health  string
	metrics string
	pprof   string
	exited  chan struct{}
	waitErr error
}

// managerSettings are what a scenario varies in the manager's Configuration.
type managerSettings struct {
	limits limits
	// concurrency of the TrainJob controller; 0 keeps the manager's default.
	concurrency int
	// featureGates is passed as --feature-gates when set.
	featureGates string
	pprof        bool
	// extra is YAML appended to the Configuration.
	extra string
}

// managerConfig is the Configuration the benchmark runs the manager with: the defaults, except
// loopback addresses on free ports, plain-HTTP metrics the harness scrapes, certificates
// provided by envtest, and the settings under test.
func managerConfig(webhookPort int, health, metricsAddr string, statusPort int, s managerSettings) string {
	cfg := fmt.Sprintf(`apiVersion: config.trainer.kubeflow.org/v1alpha1
kind: Configuration
webhook: {port: %d, host: 127.0.0.1}
metrics: {bindAddress: %q, secureServing: false, auth: {enabled: false}}
health: {healthProbeBindAddress: %q}
leaderElection: {leaderElect: true, resourceNamespace: %s}
certManagement: {enable: false}
statusServer: {port: %d}
clientConnection: {qps: %s, burst: %d}
`, webhookPort, metricsAddr, health, operatorNamespace, statusPort, strconv.FormatFloat(float64(s.limits.QPS), 'f', -1, 32), s.limits.Burst)
	if s.concurrency > 0 {
		cfg += fmt.Sprintf("controller: {groupKindConcurrency: {TrainJob.trainer.kubeflow.org: %d}}\n", s.concurrency)
	}
	if s.extra != "" {
		cfg += s.extra + "\n"
	}
	return cfg
}

// startManager runs the binary against the control plane; its log goes to dir/<name>.log.
func startManager(binary, dir, name string, cp *controlPlane, s managerSettings) (*managerProcess, error) {
	ports, err := freePorts(4)
	if err != nil {
		return nil, err
	}
	webhookPort, certDir := cp.webhookServing()
	p := &managerProcess{
		health:  fmt.Sprintf("127.0.0.1:%d", ports[0]),
		metrics: fmt.Sprintf("127.0.0.1:%d", ports[1]),
		exited:  make(chan struct{}),
	}
	config := filepath.Join(dir, name+"-config.yaml")
	if err := os.WriteFile(config, []byte(managerConfig(webhookPort, p.health, p.metrics, ports[2], s)), 0o600); err != nil {
		return nil, err
	}
	args := []string{"--config", config, "--webhook-cert-dir", certDir}
	if s.featureGates != "" {
		args = append(args, "--feature-gates", s.featureGates)
	}
	if s.pprof {
		p.pprof = fmt.Sprintf("127.0.0.1:%d", ports[3])
		args = append(args, "--pprof-bind-address", p.pprof)
	}
	if p.log, err = os.Create(filepath.Join(dir, name+".log")); err != nil {
		return nil, err
	}
	p.cmd = exec.Command(binary, args...)
	p.cmd.Env = append(os.Environ(), "KUBECONFIG="+cp.kubeconfig)
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		_ = p.log.Close()
		return nil, fmt.Errorf("starting the manager: %w", err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady waits for /readyz: certificates present, webhook server serving.
func (p *managerProcess) waitReady(ctx context.Context, timeout time.Duration) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		select {
		case <-p.exited:
			return false, fmt.Errorf("the manager exited: %w (log: %s)", p.waitErr, p.log.Name())
		default:
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+p.health+"/readyz", nil)
		if err != nil {
			return false, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return false, nil
		}
		_ = resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the manager to be ready: %w", err)
	}
	return nil
}

func (p *managerProcess) scrape(ctx context.Context) (metrics, error) {
	return scrape(ctx, "http://"+p.metrics+"/metrics")
}

func (p *managerProcess) stat() (procStat, error) {
	return readProcStat(p.cmd.Process.Pid)
}

// cpuProfile records a CPU profile of the manager for d into path, in the background; the
// returned channel yields the outcome.
func (p *managerProcess) cpuProfile(ctx context.Context, d time.Duration, path string) <-chan error {
	done := make(chan error, 1)
	if p.pprof == "" {
		done <- errors.New("pprof is off")
		return done
	}
	go func() {
		done <- fetch(ctx, fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprof, int(d.Seconds())), path)
	}()
	return done
}

// heapProfile saves the manager's heap profile (in-use and allocated) into path.
func (p *managerProcess) heapProfile(ctx context.Context, path string) error {
	if p.pprof == "" {
		return errors.New("pprof is off")
	}
	return fetch(ctx, "http://"+p.pprof+"/debug/pprof/heap", path)
}

func fetch(ctx context.Context, url, path string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// stop reads the manager's peak RSS and CPU time from /proc, then interrupts it (it releases
// its lease on the way out). The kernel's ru_maxrss would not do: a child forked from the
// harness inherits the harness's high-water mark, while VmHWM belongs to the exec'd image.
func (p *managerProcess) stop() (procStat, error) {
	defer func() { _ = p.log.Close() }()
	usage, statErr := p.stat()
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.exited
	}
	if statErr != nil {
		return procStat{}, fmt.Errorf("reading the manager's /proc entries: %w", statErr)
	}
	return usage, nil
}

// freePorts reserves n distinct loopback ports and releases them for the manager to bind.
func freePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		addr, ok := l.Addr().(*net.TCPAddr)
		if !ok {
			return nil, fmt.Errorf("unexpected address %v", l.Addr())
		}
		ports = append(ports, addr.Port)
	}
	return ports, nil
}
