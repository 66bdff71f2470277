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
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sync"
)

// Role is what a member of a fleet does.
type Role string

const (
	// RoleManager is the MultiKueue manager: TrainJobs are submitted there and dispatched.
	RoleManager Role = "manager"
	// RoleWorker runs the TrainJobs the manager dispatches to it.
	RoleWorker Role = "worker"
)

// Member is one named cluster of a fleet.
type Member struct {
	Name     string   `json:"name"`
	Role     Role     `json:"role"`
	Settings Settings `json:"settings"`
}

// MemberPortSpacing separates the ports of a fleet's members: the i-th member listens on every
// port of the fleet's base shifted by i*100. No two default ports differ by 100 or 200, so three
// members never share one (Fleet.Validate checks it for any base).
const MemberPortSpacing = 100

// Names of the multi-cluster layout, as Kueue's own MultiKueue e2e names its clusters.
const (
	ManagerName = "manager"
	Worker1Name = "worker1"
	Worker2Name = "worker2"
)

// MultiKueueLayout is a manager and two workers, each a whole local cluster with JobSet, Gantry
// and Kueue: the manager's Kueue runs MultiKueue and dispatches to the workers' Kueue. base
// gives the ports of the manager (the workers' follow, MemberPortSpacing apart), the nodes of
// each worker and the pods' run time; withoutGantry names a worker to start without Gantry.
func MultiKueueLayout(base Settings, withoutGantry string) ([]Member, error) {
	names := []string{ManagerName, Worker1Name, Worker2Name}
	if withoutGantry != "" && (withoutGantry == ManagerName || !slices.Contains(names, withoutGantry)) {
		return nil, fmt.Errorf("only a worker (%s or %s) can run without Gantry, not %q", Worker1Name, Worker2Name, withoutGantry)
	}
	members := make([]Member, 0, len(names))
	for i, name := range names {
		s := base
		s.Ports = base.Ports.Offset(i * MemberPortSpacing)
		s.Kueue = true
		role := RoleWorker
		if name == ManagerName {
			role, s.MultiKueue = RoleManager, true
			// The manager runs no pod of a dispatched TrainJob; one node keeps kwok, the
			// scheduler and up's node checks as they are elsewhere, at the least cost.
			s.Nodes.Count = 1
		}
		s.WithoutGantry = name == withoutGantry
		members = append(members, Member{Name: name, Role: role, Settings: s})
	}
	return members, nil
}

// Fleet is several named local clusters side by side on 127.0.0.1, each in a directory of its own
// under StateDir (<StateDir>/<name>) with its own ports. fleet.json in StateDir records the
// members, so status and down find them whatever flags they get.
type Fleet struct {
	Root, StateDir, BinDir string
	// KeepData keeps each member's etcd data when it starts from nothing.
	KeepData bool
	// Out receives one line per step, prefixed with the member's name.
	Out     io.Writer
	Members []Member

	mu       sync.Mutex
	clusters map[string]*Cluster
}

const fleetFile = "fleet.json"

// DefaultFleetDir is where a checkout's multi-cluster layout keeps its state.
func DefaultFleetDir(root string) string { return filepath.Join(root, ".state", "multikueue") }

// OpenFleet returns the fleet of a state directory with the members it was brought up with.
func OpenFleet(root, stateDir string) (*Fleet, error) {
	f := &Fleet{Root: root, StateDir: stateDir, BinDir: filepath.Join(root, "bin")}
	members, ok, err := f.loadMembers()
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("no multi-cluster layout in %s", stateDir)
	}
	f.Members = members
	return f, nil
}

func (f *Fleet) loadMembers() ([]Member, bool, error) {
	data, err := os.ReadFile(filepath.Join(f.StateDir, fleetFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	var members []Member
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, false, fmt.Errorf("%s: %w", filepath.Join(f.StateDir, fleetFile), err)
	}
	return members, true, nil
}

// Validate checks every member's settings, and that no two members share a name or a port.
func (f *Fleet) Validate() error {
	var errs []error
	names, ports := map[string]bool{}, map[int]string{}
	managers := 0
	for _, m := range f.Members {
		if names[m.Name] {
			errs = append(errs, fmt.Errorf("two members are named %s", m.Name))
		}
		names[m.Name] = true
		if m.Role == RoleManager {
			managers++
		}
		if err := m.Settings.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
		p := m.Settings.Ports
		for _, field := range p.Fields() {
			if other, taken := ports[*field.Port]; taken {
				errs = append(errs, fmt.Errorf("%s's port %s (%d) is also %s's", m.Name, field.Name, *field.Port, other))
			}
			ports[*field.Port] = m.Name
		}
	}
	if managers != 1 {
		errs = append(errs, fmt.Errorf("a fleet has one manager, not %d", managers))
	}
	return errors.Join(errs...)
}

// Cluster is the member of that name.
func (f *Fleet) Cluster(name string) (*Cluster, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c, ok := f.clusters[name]; ok {
		return c, nil
	}
	for _, m := range f.Members {
		if m.Name != name {
			continue
		}
		if f.clusters == nil {
			f.clusters = map[string]*Cluster{}
		}
		c := &Cluster{
			Root: f.Root, StateDir: filepath.Join(f.StateDir, m.Name), BinDir: f.BinDir,
			KeepData: f.KeepData, Out: prefixed(f.Out, m.Name), Settings: m.Settings,
		}
		f.clusters[name] = c
		return c, nil
	}
	names := make([]string, 0, len(f.Members))
	for _, m := range f.Members {
		names = append(names, m.Name)
	}
	return nil, fmt.Errorf("no cluster %q in %s; the members are %v", name, f.StateDir, names)
}

// MustCluster is Cluster for a name the fleet is known to have.
func (f *Fleet) MustCluster(name string) *Cluster {
	c, err := f.Cluster(name)
	if err != nil {
		panic(err)
	}
	return c
}

// Manager is the fleet's manager, nil if it has none.
func (f *Fleet) Manager() (*Cluster, string) {
	for _, m := range f.Members {
		if m.Role == RoleManager {
			return f.MustCluster(m.Name), m.Name
		}
	}
	return nil, ""
}

// WorkerNames lists the workers, in order.
func (f *Fleet) WorkerNames() []string {
	var out []string
	for _, m := range f.Members {
		if m.Role == RoleWorker {
			out = append(out, m.Name)
		}
	}
	return out
}

// Running reports whether any process of any member runs.
func (f *Fleet) Running() bool {
	for _, m := range f.Members {
		if f.MustCluster(m.Name).Running() {
			return true
		}
	}
	return false
}

// Up brings every member up (or repairs it), then connects the manager's MultiKueue to the
// workers (ConnectMultiKueue). A fleet with other members that still runs must go down first.
func (f *Fleet) Up(ctx context.Context) error {
	if err := f.Validate(); err != nil {
		return fmt.Errorf("invalid layout: %w", err)
	}
	saved, ok, err := f.loadMembers()
	if err != nil {
		return err
	}
	if ok && !reflect.DeepEqual(saved, f.Members) {
		running := &Fleet{Root: f.Root, StateDir: f.StateDir, BinDir: f.BinDir, Members: saved}
		if running.Running() {
			return fmt.Errorf("a multi-cluster layout with other settings runs from %s: run 'down' first, or use another state directory", f.StateDir)
		}
	}
	if err := os.MkdirAll(f.StateDir, 0o755); err != nil {
		return err
	}
	data, err := json.MarshalIndent(f.Members, "", "  ")
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(f.StateDir, fleetFile), append(data, '\n'), 0o644); err != nil {
		return err
	}
	for _, m := range f.Members {
		if err := f.MustCluster(m.Name).Up(ctx); err != nil {
			return fmt.Errorf("%s: %w", m.Name, err)
		}
	}
	return f.ConnectMultiKueue(ctx)
}

// Down stops every member, the manager first (it would otherwise log the workers going away).
func (f *Fleet) Down() error {
	var errs []error
	order := slices.Clone(f.Members)
	slices.SortStableFunc(order, func(a, b Member) int {
		if a.Role == b.Role {
			return 0
		}
		if a.Role == RoleManager {
			return -1
		}
		return 1
	})
	for _, m := range order {
		if err := f.MustCluster(m.Name).Down(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
	}
	return errors.Join(errs...)
}

// prefixWriter starts every line with a member's name.
type prefixWriter struct {
	out    io.Writer
	prefix []byte
}

func prefixed(out io.Writer, name string) io.Writer {
	if out == nil {
		return nil
	}
	return &prefixWriter{out: out, prefix: []byte("[" + name + "] ")}
}

func (w *prefixWriter) Write(p []byte) (int, error) {
	var buf bytes.Buffer
	for line := range bytes.SplitAfterSeq(p, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		buf.Write(w.prefix)
		buf.Write(line)
	}
	if _, err := w.out.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}
