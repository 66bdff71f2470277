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

// Command local-cluster runs Gantry's local development cluster: a control plane on 127.0.0.1
// with simulated GPU nodes (kwok), JobSet, the Gantry manager built from this checkout and,
// optionally, Kueue. See README.md, "Local cluster".
//
//	local-cluster up [flags]        start or repair the cluster
//	local-cluster down              stop exactly the processes it started
//	local-cluster status            what runs, with each health endpoint
//	local-cluster restart NAME      restart one component (gantry-manager is rebuilt)
//	local-cluster logs [NAME]       print a component's log (all components with --tail N)
//	local-cluster demo [flags]      up, then run the example TrainJobs and watch them
//
// With --multikueue each command acts on the multi-cluster layout instead (a MultiKueue manager
// and two workers, see multikueue.go), or with --cluster NAME on one of its clusters.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gantry-ml/gantry/test/localcluster"
)

func main() {
	// The informers of status and demo would otherwise warn that no logger is set.
	ctrllog.SetLogger(zap.New(zap.WriteTo(io.Discard)))
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

const usage = `usage: local-cluster up|down|status|restart NAME|logs [NAME]|demo [flags]
run 'local-cluster up -h' for the flags`

func run(args []string) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd, args := args[0], args[1:]
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fs := flag.NewFlagSet(cmd, flag.ContinueOnError)
	opts := bindFlags(fs)
	names, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if opts.multiKueue {
		return runFleet(ctx, cmd, names, fs, opts)
	}
	c, err := opts.cluster(fs)
	if err != nil {
		return err
	}
	switch cmd {
	case "up":
		return c.Up(ctx)
	case "down":
		return c.Down()
	case "status":
		return status(ctx, c)
	case "restart":
		if len(names) != 1 {
			return errors.New("usage: local-cluster restart NAME")
		}
		return restart(ctx, c, names[0])
	case "logs":
		return logs(c, names, opts.tail)
	case "demo":
		return demo(ctx, c, opts)
	default:
		return errors.New(usage)
	}
}

// parseInterspersed parses flags wherever they stand, before or after the positional arguments
// (`logs gantry-manager --tail 20`), which the flag package alone would take as two more names.
// It returns the positional arguments; everything after "--" is positional.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional, args = append(positional, rest[0]), rest[1:]
	}
}

type options struct {
	root, stateDir string
	settings       localcluster.Settings
	portOffset     string
	keepData       bool
	demoTimeout    string
	tail           int
	// The multi-cluster layout (multikueue.go).
	multiKueue    bool
	member        string
	withoutGantry string
}

func bindFlags(fs *flag.FlagSet) *options {
	o := &options{settings: localcluster.DefaultSettings()}
	s := &o.settings
	fs.StringVar(&o.root, "root", "", "Gantry checkout (default: found from the working directory)")
	fs.StringVar(&o.stateDir, "state-dir", os.Getenv("GANTRY_CLUSTER_DIR"), "state directory (default <root>/.state/local-cluster; env GANTRY_CLUSTER_DIR)")
	fs.IntVar(&s.Nodes.Count, "nodes", s.Nodes.Count, "simulated GPU nodes")
	fs.IntVar(&s.Nodes.GPUsPerNode, "gpus-per-node", s.Nodes.GPUsPerNode, "nvidia.com/gpu per node")
	fs.StringVar(&s.Nodes.CPU, "node-cpu", s.Nodes.CPU, "CPU capacity per node")
	fs.StringVar(&s.Nodes.Memory, "node-memory", s.Nodes.Memory, "memory capacity per node")
	fs.IntVar(&s.Nodes.NodesPerRack, "nodes-per-rack", s.Nodes.NodesPerRack, "nodes per rack (topology labels)")
	fs.DurationVar(&s.PodDuration.Duration, "pod-duration", s.PodDuration.Duration, "how long a simulated pod runs before it succeeds (per pod: annotation sim.gantry.dev/duration)")
	fs.BoolVar(&s.Kueue, "kueue", s.Kueue, "also run Kueue (needs 'hack/toolchain.sh kueue')")
	fs.BoolVar(&s.UI, "ui", s.UI, "also serve the web UI (gantry ui) on 127.0.0.1 (the demo turns it on)")
	fs.BoolVar(&s.Progress, "progress", s.Progress, "also run the progress reporter: running TrainJob pods report progress and a simulated loss to the status server (the demo turns it on)")
	fs.BoolVar(&s.Audit, "audit", s.Audit, "write the apiserver's audit log (logs/audit.log): the manager's requests and the writes to what Gantry owns")
	fs.BoolVar(&o.keepData, "keep-data", false, "keep etcd's data when starting a stopped cluster")
	fs.StringVar(&o.portOffset, "port-offset", "0", "add this to every default port (a second cluster beside the first); 'auto': the first of 20000, 20100, ... at which every port is free")
	fs.StringVar(&o.demoTimeout, "timeout", "10m", "demo: how long to wait for the example jobs")
	fs.IntVar(&o.tail, "tail", 0, "logs: only the last N lines (0: all)")
	fs.BoolVar(&o.multiKueue, "multikueue", false, "act on the multi-cluster layout: a MultiKueue manager and two workers (default state directory <root>/.state/multikueue, ports from 12000)")
	fs.StringVar(&o.member, "cluster", "", "with --multikueue: act on this cluster only (manager, worker1, worker2); 'up --cluster NAME' starts a stopped one again, keeping its data")
	fs.StringVar(&o.withoutGantry, "worker-without-gantry", "", "with --multikueue: start this worker without Gantry (to see the MultiKueue suite fail)")
	for _, p := range o.settings.Ports.Fields() {
		fs.IntVar(p.Port, p.Name+"-port", *p.Port, "port of "+p.Name+" on 127.0.0.1")
	}
	return o
}

// cluster locates the checkout and settles the settings: a running cluster's when no settings
// flag is given, else the flags with the port offset applied to every port not set explicitly.
func (o *options) cluster(fs *flag.FlagSet) (*localcluster.Cluster, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	root, state, err := o.locate(localcluster.DefaultStateDir)
	if err != nil {
		return nil, err
	}
	c := &localcluster.Cluster{
		Root: root, StateDir: state, BinDir: filepath.Join(root, "bin"),
		KeepData: o.keepData, Out: os.Stdout, Settings: o.settings,
	}
	saved, ok, err := c.LoadSettings()
	if err != nil {
		return nil, err
	}
	running := ok && c.Running()
	explicit := false
	for name := range set {
		if !nonSettingFlags[name] {
			explicit = true
		}
	}
	// `make demo` after `make dev-cluster-up DEV_CLUSTER_FLAGS=--nodes=8` uses those eight nodes.
	if running && !explicit {
		c.Settings = saved
		return c, nil
	}
	offset := 0
	switch {
	case o.portOffset == "auto" && running:
		c.Settings.Ports = saved.Ports
		return c, nil
	case o.portOffset == "auto":
		if offset, err = localcluster.FreePortOffset(c.Settings.Ports, 20000, 100, 20); err != nil {
			return nil, err
		}
	default:
		if offset, err = strconv.Atoi(o.portOffset); err != nil {
			return nil, fmt.Errorf("--port-offset: %q is neither a number nor auto", o.portOffset)
		}
	}
	for _, p := range c.Settings.Ports.Fields() {
		if !set[p.Name+"-port"] {
			*p.Port += offset
		}
	}
	return c, nil
}

// locate finds the checkout and the state directory (defaultDir's when --state-dir is not given).
func (o *options) locate(defaultDir func(root string) string) (string, string, error) {
	root := o.root
	if root == "" {
		var err error
		if root, err = findRoot(); err != nil {
			return "", "", err
		}
	}
	state := o.stateDir
	if state == "" {
		state = defaultDir(root)
	}
	state, err := filepath.Abs(state)
	return root, state, err
}

// nonSettingFlags do not change what the cluster is.
var nonSettingFlags = map[string]bool{"root": true, "state-dir": true, "keep-data": true, "timeout": true, "tail": true, "multikueue": true, "cluster": true}

// findRoot walks up from the working directory to Gantry's go.mod.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/gantry-ml/gantry\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside a Gantry checkout: run from the repository or pass --root")
		}
		dir = parent
	}
}

func status(ctx context.Context, c *localcluster.Cluster) error {
	states, err := c.Status(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("state directory %s\nexport KUBECONFIG=%s\n\n", c.StateDir, c.Kubeconfig())
	rss := c.RSS()
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "COMPONENT\tPID\tRSS\tHEALTH\tENDPOINT")
	unhealthy := 0
	for _, s := range states {
		pid, mem, health := "-", "-", "ok"
		if s.Running {
			pid = fmt.Sprint(s.PID)
		}
		if v, ok := rss[s.Name]; ok {
			mem = localcluster.MiB(v)
		}
		if s.Health != nil {
			health = s.Health.Error()
			unhealthy++
		}
		_, _ = fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", s.Name, pid, mem, health, s.Endpoint)
	}
	_, _ = fmt.Fprintf(w, "total\t\t%s\t\t\n", localcluster.MiB(localcluster.TotalRSS(rss)))
	if err := w.Flush(); err != nil {
		return err
	}
	if nodes, err := c.NodeSummary(ctx); err == nil {
		fmt.Printf("\n%s\n", nodes)
	}
	if unhealthy > 0 {
		return fmt.Errorf("%d of %d components are not healthy (logs in %s)", unhealthy, len(states), filepath.Join(c.StateDir, "logs"))
	}
	return nil
}

func restart(ctx context.Context, c *localcluster.Cluster, name string) error {
	if !slices.Contains(localcluster.ComponentNames(), name) {
		return fmt.Errorf("unknown component %q; one of %s", name, strings.Join(localcluster.ComponentNames(), ", "))
	}
	saved, err := localcluster.Open(c.Root, c.StateDir)
	if err != nil {
		return err
	}
	saved.Out, saved.KeepData = c.Out, true
	if err := saved.Stop(name); err != nil {
		return err
	}
	return saved.Up(ctx)
}

// logs prints one component's log, or the end of every component's log.
func logs(c *localcluster.Cluster, names []string, tail int) error {
	if len(names) == 0 {
		if tail == 0 {
			return errors.New("usage: local-cluster logs NAME, or logs --tail N for every component")
		}
		names = localcluster.ComponentNames()
	}
	for _, name := range names {
		if !slices.Contains(localcluster.ComponentNames(), name) {
			return fmt.Errorf("unknown component %q; one of %s", name, strings.Join(localcluster.ComponentNames(), ", "))
		}
	}
	for _, name := range names {
		if len(names) > 1 {
			fmt.Printf("===== %s (%s)\n", name, filepath.Join(c.StateDir, "logs", name+".log"))
		}
		if tail > 0 {
			fmt.Println(c.LogTail(name, tail))
			continue
		}
		data, err := os.ReadFile(filepath.Join(c.StateDir, "logs", name+".log"))
		if err != nil {
			return err
		}
		if _, err := os.Stdout.Write(data); err != nil {
			return err
		}
	}
	return nil
}
