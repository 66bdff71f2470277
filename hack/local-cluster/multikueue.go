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
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/gantry-ml/gantry/test/localcluster"
)

// The multi-cluster layout's ports start here, below the ephemeral range (32768 up) a restarted
// component's port could otherwise be taken from, and apart from the e2e suite's (20000 up) and
// the reliability suite's (10000 up) single clusters.
const (
	fleetPortStart = 12000
	fleetPortStep  = 300
)

// runFleet runs a command on the multi-cluster layout, or on one of its clusters (--cluster).
func runFleet(ctx context.Context, cmd string, names []string, fs *flag.FlagSet, o *options) error {
	f, err := o.fleet(fs, cmd == "up")
	if err != nil {
		return err
	}
	if o.member != "" {
		return runMember(ctx, cmd, names, f, o)
	}
	switch cmd {
	case "up":
		if err := f.Up(ctx); err != nil {
			return err
		}
		fmt.Println("\nthe layout is up; each cluster's kubeconfig:")
		for _, m := range f.Members {
			fmt.Printf("  %-8s %s\n", m.Name, f.MustCluster(m.Name).Kubeconfig())
		}
		return nil
	case "down":
		return f.Down()
	case "status":
		return fleetStatus(ctx, f)
	case "logs":
		if o.tail == 0 {
			return errors.New("usage: local-cluster logs --multikueue --cluster NAME [COMPONENT], or --tail N for every cluster")
		}
		for _, m := range f.Members {
			fmt.Printf("########## %s\n", m.Name)
			if err := logs(f.MustCluster(m.Name), names, o.tail); err != nil {
				return err
			}
		}
		return nil
	case "restart":
		return errors.New("usage: local-cluster restart --multikueue --cluster NAME COMPONENT")
	default:
		return errors.New(usage)
	}
}

// runMember runs a command on one cluster of the layout.
func runMember(ctx context.Context, cmd string, names []string, f *localcluster.Fleet, o *options) error {
	c, err := f.Cluster(o.member)
	if err != nil {
		return err
	}
	switch cmd {
	case "up":
		// A cluster stopped alone (down --cluster) comes back with its data: the manager's token
		// for a worker stays valid, and the jobs it ran are where they were.
		c.KeepData = true
		if err := c.Up(ctx); err != nil {
			return err
		}
		return f.ConnectMultiKueue(ctx)
	case "down":
		return c.Down()
	case "status":
		return status(ctx, c)
	case "restart":
		if len(names) != 1 {
			return errors.New("usage: local-cluster restart --multikueue --cluster NAME COMPONENT")
		}
		return restart(ctx, c, names[0])
	case "logs":
		return logs(c, names, o.tail)
	default:
		return errors.New(usage)
	}
}

// fleet is the layout of the state directory: the one that was brought up, unless `up` is given
// settings flags, which make a new one (up refuses it while the old one runs).
func (o *options) fleet(fs *flag.FlagSet, up bool) (*localcluster.Fleet, error) {
	root, state, err := o.locate(localcluster.DefaultFleetDir)
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	explicit := false
	for name := range set {
		explicit = explicit || !nonSettingFlags[name]
	}
	if saved, err := localcluster.OpenFleet(root, state); err == nil && (!up || !explicit) {
		saved.KeepData, saved.Out = o.keepData, os.Stdout
		return saved, nil
	} else if !up {
		return nil, fmt.Errorf("%w (run 'up --multikueue')", err)
	}
	base := o.settings
	offset := 0
	switch {
	case !set["port-offset"] || o.portOffset == "auto":
		if offset, err = localcluster.FreeFleetPortOffset(base.Ports, 3, fleetPortStart, fleetPortStep, 20); err != nil {
			return nil, err
		}
	default:
		if offset, err = strconv.Atoi(o.portOffset); err != nil {
			return nil, fmt.Errorf("--port-offset: %q is neither a number nor auto", o.portOffset)
		}
	}
	for _, p := range base.Ports.Fields() {
		if !set[p.Name+"-port"] {
			*p.Port += offset
		}
	}
	members, err := localcluster.MultiKueueLayout(base, o.withoutGantry)
	if err != nil {
		return nil, err
	}
	return &localcluster.Fleet{
		Root: root, StateDir: state, BinDir: filepath.Join(root, "bin"),
		KeepData: o.keepData, Out: os.Stdout, Members: members,
	}, nil
}

// fleetStatus prints each cluster's status, whether the manager's Kueue reaches each worker,
// and the memory each cluster takes.
func fleetStatus(ctx context.Context, f *localcluster.Fleet) error {
	var errs []error
	for _, m := range f.Members {
		fmt.Printf("########## %s (%s)\n", m.Name, m.Role)
		if err := status(ctx, f.MustCluster(m.Name)); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", m.Name, err))
		}
		fmt.Println()
	}
	mgr, _ := f.Manager()
	if cl, err := mgr.Client(); err == nil {
		fmt.Println("MultiKueue (the manager's Kueue, per worker):")
		for _, w := range f.WorkerNames() {
			state := "connected"
			if err := localcluster.MultiKueueClusterActive(ctx, cl, w); err != nil {
				state = err.Error()
			}
			fmt.Printf("  %-8s %s\n", w, state)
		}
	}
	fmt.Println("memory (resident, all components):")
	var total uint64
	for _, m := range f.Members {
		rss := localcluster.TotalRSS(f.MustCluster(m.Name).RSS())
		total += rss
		fmt.Printf("  %-8s %s\n", m.Name, localcluster.MiB(rss))
	}
	fmt.Printf("  %-8s %s\n", "all", localcluster.MiB(total))
	return errors.Join(errs...)
}
