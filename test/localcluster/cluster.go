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
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"syscall"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"
)

// component is one process of the cluster.
type component struct {
	name string
	// binary is a path; toolchain binaries live in BinDir.
	binary  string
	ports   []int
	enabled bool
	args    []string
	env     []string
	probe   probe
	// startTimeout bounds the wait for the first healthy probe.
	startTimeout time.Duration
	// prepare runs before the process starts: configuration files and the objects it needs.
	prepare func(context.Context) error
	// install runs once it is healthy, on every `up`: objects it serves. Both are idempotent.
	install func(context.Context) error
}

// componentNames is the start order; down stops them in reverse.
var componentNames = []string{
	"etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kwok", "jobset", "gantry-manager", ManagerReplica, "kueue", "gantry-ui", ProgressReporter,
}

// pkiSet is the cluster's PKI: one CA for the control plane and JobSet, and one CA each for the
// two components whose in-process rotators check the CA's name.
type pkiSet struct {
	ca, apiserver, jobset *keyPair
	gantryCA, gantry      *keyPair
	kueueCA, kueue        *keyPair
	token                 string
	roots                 *x509.CertPool
}

func (c *Cluster) ensurePKI() error {
	dir := c.path("pki")
	p := &pkiSet{}
	var err error
	if p.ca, err = ensureCA(dir, certSpec{File: "ca", CommonName: "gantry-local-ca"}); err != nil {
		return err
	}
	apiserver := loopbackSANs
	apiserver.File, apiserver.CommonName = "apiserver", "kube-apiserver"
	apiserver.DNSNames = append(apiserver.DNSNames, "kubernetes", "kubernetes.default", "kubernetes.default.svc")
	if p.apiserver, err = ensureServing(dir, p.ca, apiserver); err != nil {
		return err
	}
	if p.jobset, err = ensureServing(dir, p.ca, serving("jobset-webhook", "jobset-webhook-service.jobset-system.svc")); err != nil {
		return err
	}
	// kwok serves pod logs as a kubelet would, over HTTPS on 127.0.0.1; the apiserver checks its
	// certificate (--kubelet-certificate-authority) and shows its own client certificate, as it
	// does to kubelets (kwok asks for none).
	if _, err = ensureServing(dir, p.ca, kwokServingCert); err != nil {
		return err
	}
	if _, err = ensureServing(dir, p.ca, kubeletClientCert); err != nil {
		return err
	}
	// The names the rotators check: internal/cert (Gantry) and Kueue's pkg/util/cert.
	if p.gantryCA, err = ensureCA(dir, certSpec{File: "gantry-ca", CommonName: "kubeflow-trainer-ca"}); err != nil {
		return err
	}
	if p.gantry, err = ensureServing(dir, p.gantryCA, serving("gantry-webhook", gantryWebhookDNS)); err != nil {
		return err
	}
	if p.kueueCA, err = ensureCA(dir, certSpec{File: "kueue-ca", CommonName: "kueue-ca"}); err != nil {
		return err
	}
	if p.kueue, err = ensureServing(dir, p.kueueCA, serving("kueue-webhook", kueueWebhookDNS)); err != nil {
		return err
	}
	if err := ensureServiceAccountKey(dir); err != nil {
		return err
	}
	if p.token, err = ensureToken(dir); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "tokens.csv"), []byte(p.token+",admin,admin,system:masters\n"), 0o600); err != nil {
		return err
	}
	// JobSet reads its provided certificate from a directory. Kueue's rotator waits for the
	// certificate of its Secret to appear in its directory, as a kubelet would mount it; Gantry's
	// manager copies its Secret there itself (cert.DiskSync), so its directory is left alone.
	for _, d := range []struct {
		dir    string
		kp, ca *keyPair
	}{{"jobset", p.jobset, p.ca}, {"kueue", p.kueue, p.kueueCA}} {
		if err := p.writeCertDir(c.path("certs", d.dir), d.kp, d.ca); err != nil {
			return err
		}
	}
	p.roots = x509.NewCertPool()
	p.roots.AddCert(p.ca.cert)
	c.pki = p
	return nil
}

func serving(file, dnsName string) certSpec {
	s := loopbackSANs
	s.File, s.CommonName = file, dnsName
	s.DNSNames = append([]string{dnsName}, s.DNSNames...)
	return s
}

// writeCertDir lays out tls.crt and tls.key for a component that reads them from a directory.
func (*pkiSet) writeCertDir(dir string, kp, ca *keyPair) error {
	if err := writeFileAtomic(filepath.Join(dir, "ca.crt"), ca.CertPEM, 0o644); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "tls.key"), kp.KeyPEM, 0o600); err != nil {
		return err
	}
	// Last: a rotator waiting for the certificate reads the key right after.
	return writeFileAtomic(filepath.Join(dir, "tls.crt"), kp.CertPEM, 0o644)
}

// Up brings the cluster up, or repairs it: components already running and healthy are left
// alone, dead ones are started again, and the objects every component needs are re-applied.
func (c *Cluster) Up(ctx context.Context) error {
	if err := c.Settings.Validate(); err != nil {
		return fmt.Errorf("invalid settings: %w", err)
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	t0 := time.Now()
	running := c.Running()
	if saved, ok, err := c.LoadSettings(); err != nil {
		return err
	} else if ok && running {
		// Kueue, the UI and the progress reporter can be added to a running cluster; anything
		// else needs a fresh one.
		want := c.Settings
		want.Kueue, want.UI, want.Progress = saved.Kueue, saved.UI, saved.Progress
		if !reflect.DeepEqual(want, saved) {
			running, _ := json.Marshal(saved)
			asked, _ := json.Marshal(want)
			return fmt.Errorf("a cluster with other settings runs from %s: run 'down' first, or use another state directory\n  running:   %s\n  requested: %s", c.StateDir, running, asked)
		}
		c.Settings.Kueue = c.Settings.Kueue || saved.Kueue
		c.Settings.UI = c.Settings.UI || saved.UI
		c.Settings.Progress = c.Settings.Progress || saved.Progress
	}
	if err := c.checkBinaries(c.components()); err != nil {
		return err
	}
	if err := c.checkPorts(c.components()); err != nil {
		return err
	}
	if !running && !c.KeepData {
		if err := os.RemoveAll(c.path("etcd")); err != nil {
			return err
		}
		// The pods whose logs they held went with etcd's data.
		if err := os.RemoveAll(c.path(podLogsDir)); err != nil {
			return err
		}
		c.removeHostPathVolumes()
	}
	if err := c.ensurePKI(); err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	if err := c.writeKubeconfig(c.pki.ca.CertPEM, c.pki.token); err != nil {
		return err
	}
	if err := c.saveSettings(); err != nil {
		return err
	}
	c.logf("local cluster in %s", c.StateDir)
	for _, comp := range c.components() {
		if !comp.enabled {
			continue
		}
		if err := c.ensureComponent(ctx, comp); err != nil {
			return err
		}
	}
	if err := c.waitUsable(ctx); err != nil {
		return err
	}
	c.logf("cluster ready in %.1fs; to use it:\n  export KUBECONFIG=%s", time.Since(t0).Seconds(), c.Kubeconfig())
	return nil
}

func (c *Cluster) checkBinaries(comps []component) error {
	var missing []string
	for _, comp := range comps {
		// The manager, the UI and the progress reporter are built from the checkout when they start.
		if !comp.enabled || comp.name == "gantry-manager" || comp.name == "gantry-ui" || comp.name == ProgressReporter {
			continue
		}
		if _, err := os.Stat(comp.binary); err != nil {
			missing = append(missing, comp.binary)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	hint := "hack/toolchain.sh cluster kustomize"
	if c.Settings.Kueue {
		hint += " kueue"
	}
	return fmt.Errorf("missing binaries %v: build them with '%s' (or 'make cluster-assets')", missing, hint)
}

// checkPorts fails before anything starts if a port of a component to start is taken.
func (c *Cluster) checkPorts(comps []component) error {
	var errs []error
	for _, comp := range comps {
		if !comp.enabled || c.record(comp.name).alive() {
			continue
		}
		for _, p := range comp.ports {
			if !portFree(p) {
				errs = append(errs, fmt.Errorf("%s: port %d on 127.0.0.1 is in use by another process", comp.name, p))
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w\nstop those processes or choose other ports (--port-offset N, or --<name>-port)", errors.Join(errs...))
	}
	return nil
}

func (c *Cluster) ensureComponent(ctx context.Context, comp component) error {
	if rec := c.record(comp.name); rec.alive() {
		if err := comp.probe.check(ctx); err != nil {
			if err := waitFor(ctx, comp.startTimeout, comp.name, comp.probe.check); err != nil {
				return fmt.Errorf("%s (pid %d) runs but is not healthy: %w\n%s", comp.name, rec.PID, err, c.logHint(comp.name))
			}
		}
		setup, err := timed(ctx, comp.install)
		if err != nil {
			return fmt.Errorf("%s: %w", comp.name, err)
		}
		c.logf("  %-24s running (pid %d)%s", comp.name, rec.PID, setupNote(setup))
		return nil
	}
	for _, p := range comp.ports {
		if !portFree(p) {
			return fmt.Errorf("%s: port %d on 127.0.0.1 is in use by another process; stop it or choose other ports (--port-offset or the --*-port flags)", comp.name, p)
		}
	}
	before, err := timed(ctx, comp.prepare)
	if err != nil {
		return fmt.Errorf("%s: %w", comp.name, err)
	}
	t0 := time.Now()
	proc, err := c.startProcess(comp.name, comp.binary, comp.args, comp.env)
	if err != nil {
		return err
	}
	if err := c.waitHealthy(ctx, comp, proc); err != nil {
		return err
	}
	started := time.Since(t0)
	after, err := timed(ctx, comp.install)
	if err != nil {
		return fmt.Errorf("%s: %w", comp.name, err)
	}
	c.logf("  %-24s started (pid %d) in %.1fs%s", comp.name, proc.rec.PID, started.Seconds(), setupNote(before+after))
	return nil
}

// timed runs an optional step and says how long it took.
func timed(ctx context.Context, step func(context.Context) error) (time.Duration, error) {
	if step == nil {
		return 0, nil
	}
	t0 := time.Now()
	err := step(ctx)
	return time.Since(t0), err
}

func setupNote(d time.Duration) string {
	if d < 100*time.Millisecond {
		return ""
	}
	return fmt.Sprintf(" (+%.1fs setup)", d.Seconds())
}

// waitHealthy polls the probe until it passes, the process exits, or the start timeout passes.
func (c *Cluster) waitHealthy(ctx context.Context, comp component, proc *process) error {
	err := waitFor(ctx, comp.startTimeout, comp.name, func(ctx context.Context) error {
		select {
		case <-proc.exited:
			return errExited{proc.err}
		default:
		}
		return comp.probe.check(ctx)
	})
	if err != nil {
		return fmt.Errorf("%s did not become healthy (%s): %w\n%s", comp.name, comp.probe, err, c.logHint(comp.name))
	}
	return nil
}

type errExited struct{ err error }

func (e errExited) Error() string { return fmt.Sprintf("process exited: %v", e.err) }

func (c *Cluster) logHint(name string) string {
	return fmt.Sprintf("last lines of %s:\n%s", c.logPath(name), c.LogTail(name, 25))
}

// Running reports whether any component of the cluster runs.
func (c *Cluster) Running() bool {
	return slices.ContainsFunc(componentNames, func(n string) bool { return c.record(n).alive() })
}

// Down stops every process the cluster started, newest first, and only those: each PID is
// checked against the recorded binary and start time before it is signalled.
func (c *Cluster) Down() error {
	if _, err := os.Stat(c.StateDir); errors.Is(err, os.ErrNotExist) {
		c.logf("no cluster in %s", c.StateDir)
		return nil
	}
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	var errs []error
	if err := c.recordHostPathVolumes(); err != nil {
		c.logf("  not recording the cluster's hostPath volumes: %v", err)
	}
	stopped := 0
	for _, name := range slices.Backward(componentNames) {

		rec := c.record(name)
		ok, err := c.stopRecorded(name, 15*time.Second)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			stopped++
			c.logf("  %-24s stopped (pid %d)", name, rec.PID)
		}
	}
	if stopped == 0 && len(errs) == 0 {
		c.logf("nothing was running from %s", c.StateDir)
	}
	return errors.Join(errs...)
}

// lock serialises up and down on one state directory.
func (c *Cluster) lock() (func(), error) {
	if err := os.MkdirAll(c.StateDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(c.path(".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		c.logf("waiting for another up/down on %s", c.StateDir)
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return func() { _ = f.Close() }, nil
}

// ComponentStatus is what status reports for one component.
type ComponentStatus struct {
	Name     string
	PID      int
	Running  bool
	Endpoint string
	// Health is nil when the health endpoint answered 200.
	Health error
}

// Status probes every enabled component of the cluster in the state directory.
func (c *Cluster) Status(ctx context.Context) ([]ComponentStatus, error) {
	saved, ok, err := c.LoadSettings()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no cluster in %s (run 'up')", c.StateDir)
	}
	c.Settings = saved
	if err := c.loadPKI(); err != nil {
		return nil, err
	}
	var out []ComponentStatus
	for _, comp := range c.components() {
		if !comp.enabled {
			continue
		}
		s := ComponentStatus{Name: comp.name, Endpoint: comp.probe.url}
		if rec := c.record(comp.name); rec.alive() {
			s.PID, s.Running = rec.PID, true
			s.Health = comp.probe.check(ctx)
		} else {
			s.Health = errors.New("not running")
		}
		out = append(out, s)
	}
	return out, nil
}

// loadPKI reads the certificates and token an earlier up wrote, for probes.
func (c *Cluster) loadPKI() error {
	ca, err := loadKeyPair(c.path("pki"), "ca")
	if err != nil {
		return fmt.Errorf("reading the cluster CA: %w", err)
	}
	token, err := os.ReadFile(c.path("pki", "admin.token"))
	if err != nil {
		return err
	}
	c.pki = &pkiSet{ca: ca, token: string(token), roots: x509.NewCertPool()}
	c.pki.roots.AddCert(ca.cert)
	return nil
}

// Open returns the cluster of a state directory with the settings it was brought up with, for
// status, down and tests.
func Open(root, stateDir string) (*Cluster, error) {
	c := &Cluster{Root: root, StateDir: stateDir, BinDir: filepath.Join(root, "bin")}
	s, ok, err := c.LoadSettings()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no cluster in %s", stateDir)
	}
	c.Settings = s
	return c, nil
}

// clusterState is set up by Up.
type clusterState struct {
	pki  *pkiSet
	kube client.Client
}

// ComponentNames lists the components in start order.
func ComponentNames() []string { return slices.Clone(componentNames) }

// Stop stops one component, if it runs.
func (c *Cluster) Stop(name string) error {
	unlock, err := c.lock()
	if err != nil {
		return err
	}
	defer unlock()
	rec := c.record(name)
	ok, err := c.stopRecorded(name, 15*time.Second)
	if ok {
		c.logf("  %-24s stopped (pid %d)", name, rec.PID)
	}
	return err
}
