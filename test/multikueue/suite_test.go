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

// Package multikueue runs TrainJobs through Kueue's MultiKueue on the local cluster's
// multi-cluster layout (localcluster.MultiKueueLayout): a manager and two workers, each with its
// own etcd, apiserver, controllers, kwok, JobSet, Gantry and Kueue v0.19.2, the manager's Kueue
// dispatching to the workers' through kubeconfig Secrets. TrainJobs are submitted to the manager
// only; each spec checks what reaches the worker and what comes back.
//
// The suite uses the layout of MULTIKUEUE_E2E_DIR when set (make test-e2e-multikueue starts one),
// else it starts its own in .state/multikueue-e2e (ports from 12000, to free ones) and stops it
// at the end, unless E2E_KEEP_CLUSTER=1. MULTIKUEUE_WORKER_WITHOUT_GANTRY=worker2 starts that
// worker without Gantry, to see the suite fail.
package multikueue

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// Waits: pods run for seconds, Kueue dispatches in about one, and the machine is shared by
// three clusters.
const (
	timeout  = 2 * time.Minute
	interval = 250 * time.Millisecond
	// workerGPUs is each worker's quota in the specs' ClusterQueues: its two nodes' GPUs.
	workerGPUs = 16
)

// member is one cluster of the layout as the specs reach it.
type member struct {
	name string
	lc   *localcluster.Cluster
	cfg  *rest.Config
	client.Client
}

var (
	ctx         context.Context
	fleet       *localcluster.Fleet
	startedHere bool
	manager     *member
	workers     []*member
	gantryBin   string
	memory      = &peakMemory{peak: map[string]uint64{}}
)

func TestMultiKueue(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(timeout)
	gomega.SetDefaultEventuallyPollingInterval(interval)
	gomega.SetDefaultConsistentlyPollingInterval(interval)
	ginkgo.RunSpecs(t, "MultiKueue suite (a manager and two workers, each with JobSet, Gantry and Kueue)")
}

var _ = ginkgo.BeforeSuite(func() {
	ctrllog.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	ctx = context.Background()
	root := util.RepoRoot()
	var err error
	if dir := os.Getenv("MULTIKUEUE_E2E_DIR"); dir != "" {
		fleet, err = localcluster.OpenFleet(root, dir)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		fleet.Out = ginkgo.GinkgoWriter
	} else {
		fleet = ownFleet(root)
		startedHere = true
		if os.Getenv("E2E_KEEP_CLUSTER") != "1" {
			ginkgo.DeferCleanup(func() { gomega.Expect(fleet.Down()).To(gomega.Succeed()) })
		}
		gomega.Expect(fleet.Up(ctx)).To(gomega.Succeed())
	}
	s, err := scheme.New()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for _, m := range fleet.Members {
		lc := fleet.MustCluster(m.Name)
		cfg, err := lc.RESTConfig()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		cl, err := client.New(cfg, client.Options{Scheme: s})
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		mb := &member{name: m.Name, lc: lc, cfg: cfg, Client: cl}
		if m.Role == localcluster.RoleManager {
			manager = mb
		} else {
			workers = append(workers, mb)
		}
	}
	gomega.Expect(manager).NotTo(gomega.BeNil(), "the layout in %s has no manager", fleet.StateDir)
	gomega.Expect(workers).To(gomega.HaveLen(2), "the layout in %s", fleet.StateDir)
	dir, err := os.MkdirTemp("", "gantry-multikueue-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(os.RemoveAll, dir)
	gantryBin, err = util.BuildCmd(dir, "gantry")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	for _, w := range workers {
		expectWorkerServesTrainJobs(w)
	}
})

// ownFleet is the layout the suite starts when it is given none: the one an earlier run kept
// (E2E_KEEP_CLUSTER=1), else a new one on free ports with an audit log on every cluster.
func ownFleet(root string) *localcluster.Fleet {
	dir := filepath.Join(root, ".state", "multikueue-e2e")
	if kept, err := localcluster.OpenFleet(root, dir); err == nil && kept.Running() {
		kept.Out = ginkgo.GinkgoWriter
		return kept
	}
	base := localcluster.DefaultSettings()
	// Two nodes of eight GPUs per worker: what its ClusterQueue's quota holds (workerGPUs).
	base.Nodes.Count = 2
	base.Audit = true
	offset, err := localcluster.FreeFleetPortOffset(base.Ports, 3, 12000, 300, 20)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	base.Ports = base.Ports.Offset(offset)
	members, err := localcluster.MultiKueueLayout(base, os.Getenv("MULTIKUEUE_WORKER_WITHOUT_GANTRY"))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return &localcluster.Fleet{
		Root: root, StateDir: dir, BinDir: filepath.Join(root, "bin"), Out: ginkgo.GinkgoWriter, Members: members,
	}
}

// expectWorkerServesTrainJobs fails the suite, before any spec, on a worker the manager cannot
// dispatch TrainJobs to or that cannot run them: Kueue must be connected to it (it watches
// TrainJobs there, so their CRD must be served), and Gantry must have installed its runtimes.
func expectWorkerServesTrainJobs(w *member) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func() error {
		return localcluster.MultiKueueClusterActive(ctx, manager.Client, w.name)
	}).WithTimeout(time.Minute).Should(gomega.Succeed(),
		"worker %s cannot take TrainJobs from the manager: every worker needs Gantry (its CRDs, controller and runtimes) and Kueue", w.name)
	rt := &trainer.ClusterTrainingRuntime{}
	gomega.Expect(w.Get(ctx, client.ObjectKey{Name: "torch-distributed"}, rt)).To(gomega.Succeed(),
		"worker %s has no ClusterTrainingRuntime torch-distributed: Gantry and its runtimes must run on every worker", w.name)
}

// Every spec leaves the layout as it found it; its memory is sampled after each, and the peak
// of each cluster reported at the end.
var _ = ginkgo.AfterEach(func() {
	for _, m := range append([]*member{manager}, workers...) {
		memory.sample(m.name, localcluster.TotalRSS(m.lc.RSS()))
	}
})

// peakMemory is the most resident memory each cluster's processes took at a sample.
type peakMemory struct {
	mu   sync.Mutex
	peak map[string]uint64
}

func (p *peakMemory) sample(name string, rss uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.peak[name] = max(p.peak[name], rss)
}

func (p *peakMemory) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	names := make([]string, 0, len(p.peak))
	var total uint64
	for n, v := range p.peak {
		names = append(names, n)
		total += v
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "  %-8s %s\n", n, localcluster.MiB(p.peak[n]))
	}
	fmt.Fprintf(&b, "  %-8s %s (sum of the peaks)\n", "all", localcluster.MiB(total))
	return b.String()
}

var _ = ginkgo.ReportAfterSuite("memory and component logs", func(r ginkgo.Report) {
	if fleet == nil {
		return
	}
	fmt.Fprintf(os.Stderr, "\nresident memory of each cluster, peak of the samples taken after each spec:\n%s", memory)
	if r.SuiteSucceeded {
		return
	}
	for _, m := range fleet.Members {
		c := fleet.MustCluster(m.Name)
		for _, name := range localcluster.ComponentNames() {
			if tail := c.LogTail(name, 30); tail != "" {
				fmt.Fprintf(os.Stderr, "\n===== %s %s (last 30 lines of %s)\n%s\n", m.Name, name, filepath.Join(c.StateDir, "logs", name+".log"), tail)
			}
		}
	}
})
