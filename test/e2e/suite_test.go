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

// Package e2e runs TrainJobs on the local cluster (test/localcluster): real etcd,
// kube-apiserver, kube-scheduler, Job and garbage-collector controllers, JobSet and Kueue, with
// kwok simulating the GPU nodes and the pods' lifecycle. Each spec works in its own namespace and
// deletes what it created.
//
// The suite uses the cluster of E2E_CLUSTER_DIR when set (make test-e2e starts one), else it
// starts its own in .state/e2e (ports shifted by 20000 or more, to free ones, so a developer's
// cluster can keep running) and stops it at the end, unless E2E_KEEP_CLUSTER=1.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/gantry-ml/gantry/internal/scheme"
	"github.com/gantry-ml/gantry/test/localcluster"
	"github.com/gantry-ml/gantry/test/util"
)

// Waits on the cluster: pods run for seconds, and the machine is shared.
const (
	timeout  = 2 * time.Minute
	interval = 250 * time.Millisecond
)

var (
	ctx         context.Context
	cluster     *localcluster.Cluster
	restConfig  *rest.Config
	k8sClient   client.Client
	testScheme  *runtime.Scheme
	startedHere bool
)

func TestE2E(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	gomega.SetDefaultEventuallyTimeout(timeout)
	gomega.SetDefaultEventuallyPollingInterval(interval)
	gomega.SetDefaultConsistentlyPollingInterval(interval)
	ginkgo.RunSpecs(t, "End-to-end suite (local cluster with JobSet and Kueue)")
}

var _ = ginkgo.BeforeSuite(func() {
	ctrllog.SetLogger(zap.New(zap.WriteTo(ginkgo.GinkgoWriter), zap.UseDevMode(true)))
	ctx = context.Background()
	root := util.RepoRoot()
	var err error
	if dir := os.Getenv("E2E_CLUSTER_DIR"); dir != "" {
		cluster, err = localcluster.Open(root, dir)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(cluster.Settings.Kueue).To(gomega.BeTrue(), "the cluster in %s runs without Kueue; start it with --kueue", dir)
	} else if kept, err := localcluster.Open(root, filepath.Join(root, ".state", "e2e")); err == nil && kept.Running() {
		// A cluster an earlier run kept (E2E_KEEP_CLUSTER=1): repaired if need be, then reused.
		cluster, startedHere = kept, true
		cluster.Out, cluster.Settings.Kueue = ginkgo.GinkgoWriter, true
		gomega.Expect(cluster.Up(ctx)).To(gomega.Succeed())
	} else {
		s := localcluster.DefaultSettings()
		offset, err := localcluster.FreePortOffset(s.Ports, 20000, 100, 20)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		s.Ports = s.Ports.Offset(offset)
		s.Kueue, s.Progress = true, true
		cluster = &localcluster.Cluster{
			Root: root, StateDir: filepath.Join(root, ".state", "e2e"), BinDir: filepath.Join(root, "bin"),
			Out: ginkgo.GinkgoWriter, Settings: s,
		}
		startedHere = true
		gomega.Expect(cluster.Up(ctx)).To(gomega.Succeed())
	}
	// Running pods report progress as training code would (the OptimizationJob spec's trials
	// report their loss so): a cluster brought up without the progress reporter gets it now.
	if !cluster.Settings.Progress {
		gomega.Expect(cluster.EnableProgress(ctx)).To(gomega.Succeed())
	}
	restConfig, err = cluster.RESTConfig()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	testScheme, err = scheme.New()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	k8sClient, err = client.New(restConfig, client.Options{Scheme: testScheme})
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
})

var _ = ginkgo.AfterSuite(func() {
	if startedHere && os.Getenv("E2E_KEEP_CLUSTER") != "1" {
		gomega.Expect(cluster.Down()).To(gomega.Succeed())
	}
})

// On failure, the end of every component's log: what the apiserver, the controllers and kwok
// were doing is usually the explanation.
var _ = ginkgo.ReportAfterSuite("component logs", func(r ginkgo.Report) {
	if r.SuiteSucceeded || cluster == nil {
		return
	}
	for _, name := range localcluster.ComponentNames() {
		if tail := cluster.LogTail(name, 40); tail != "" {
			fmt.Fprintf(os.Stderr, "\n===== %s (last 40 lines of %s)\n%s\n", name, filepath.Join(cluster.StateDir, "logs", name+".log"), tail)
		}
	}
})
