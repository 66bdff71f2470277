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

package e2e

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/test/util"
)

// cliResult is what one `kubectl gantry` command line did, and when it ended.
type cliResult struct {
	code           int
	stdout, stderr string
	ended          time.Time
}

// gantry runs the command line in this process against the cluster, as `kubectl gantry` would.
func gantry(c context.Context, args ...string) cliResult {
	var stdout, stderr bytes.Buffer
	o := cli.NewOptions(&bytes.Buffer{}, &stdout, &stderr)
	root := cli.NewRootCommand(o)
	root.SetContext(c)
	code := cli.Execute(o, root, append([]string{"--kubeconfig", cluster.Kubeconfig()}, args...))
	return cliResult{code: code, stdout: stdout.String(), stderr: stderr.String(), ended: time.Now()}
}

// jobFile writes a TrainJob as the YAML file a practitioner would submit.
func jobFile(tj *trainer.TrainJob) string {
	tj.APIVersion, tj.Kind = trainer.GroupVersion.String(), trainer.TrainJobKind
	data, err := yaml.Marshal(tj)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	path := filepath.Join(ginkgo.GinkgoT().TempDir(), "torch.yaml")
	gomega.Expect(os.WriteFile(path, data, 0o600)).To(gomega.Succeed())
	return path
}

var _ = ginkgo.Describe("kubectl gantry", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = newNamespace("cli") })

	ginkgo.It("train -f --wait exits 0 when the pods complete", func() {
		tj := simulate(trainJob(ns, "ok", clusterRuntime, "torch-distributed", 2, 1),
			map[string]map[string]string{"node": {simDuration: "2s"}})
		r := gantry(ctx, "train", "-n", ns, "-f", jobFile(tj), "--wait", "--timeout", "2m")
		gomega.Expect(r.stderr).To(gomega.BeEmpty())
		gomega.Expect(r.code).To(gomega.Equal(0))
		gomega.Expect(r.stdout).To(gomega.Equal("trainjob.trainer.kubeflow.org/ok created\n"))
		gomega.Expect(conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobComplete)).NotTo(gomega.BeNil())
	})

	ginkgo.It("train -f --wait exits 1 within 5 s of the Failed condition", func() {
		// A runtime whose Job fails on the first exit code, as TestTrainJob's crash spec uses.
		gomega.Expect(k8sClient.Create(ctx, failFastRuntime(ns))).To(gomega.Succeed())
		tj := simulate(trainJob(ns, "bad", nsRuntime, "fail-fast", 1, 1),
			map[string]map[string]string{"node": {simDuration: "1s", simExitCode: "42"}})
		r := gantry(ctx, "train", "-n", ns, "-f", jobFile(tj), "--wait", "--timeout", "2m")
		gomega.Expect(r.code).To(gomega.Equal(1), r.stderr)
		gomega.Expect(r.stderr).To(gomega.HavePrefix("error: TrainJob bad failed: "))
		failed := conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobFailed)
		gomega.Expect(failed).NotTo(gomega.BeNil())
		// lastTransitionTime has a resolution of seconds: allow the second it was cut to.
		gomega.Expect(r.ended.Sub(failed.LastTransitionTime.Time)).To(gomega.BeNumerically("<", 6*time.Second))
	})

	ginkgo.It("wait --timeout 2s on a running job exits 3", func() {
		tj := simulate(trainJob(ns, "long", clusterRuntime, "torch-distributed", 1, 1),
			map[string]map[string]string{"node": {simDuration: "10m"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		gomega.Eventually(func() string {
			return gantry(ctx, "get", "long", "-n", ns, "-o", "jsonpath={.state}").stdout
		}).Should(gomega.Equal("Running"))
		start := time.Now()
		r := gantry(ctx, "wait", "long", "-n", ns, "--timeout", "2s")
		gomega.Expect(r.code).To(gomega.Equal(3), r.stderr)
		gomega.Expect(r.stderr).To(gomega.Equal("error: timed out after 2s waiting for TrainJob long to be Complete (it is Running)\n"))
		gomega.Expect(r.ended.Sub(start)).To(gomega.BeNumerically("<", 10*time.Second))
	})
})

var _ = ginkgo.Describe("kubectl gantry logs -f", func() {
	ginkgo.It("started before the pod exists, prints its first line within 1 s of it running, and ends with the job", func() {
		ns := newNamespace("cli-logs")
		tj := simulate(trainJob(ns, "logs", clusterRuntime, "torch-distributed", 1, 1),
			map[string]map[string]string{"node": {simStartDelay: "4s", simDuration: "6s"}})
		gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
		out := &util.SyncBuffer{}
		var errOut bytes.Buffer
		done := make(chan int, 1)
		go func() {
			defer ginkgo.GinkgoRecover()
			o := cli.NewOptions(&bytes.Buffer{}, out, &errOut)
			done <- cli.Execute(o, cli.NewRootCommand(o), []string{"--kubeconfig", cluster.Kubeconfig(), "logs", "logs", "-n", ns, "-f"})
		}()

		// While the pod waits to start, give it a log of its own.
		var pod string
		gomega.Eventually(func() []string { return activePods(ns, "logs") }).Should(gomega.HaveLen(1))
		pod = activePods(ns, "logs")[0]
		gomega.Expect(cluster.SetPodLogs(ctx, ns, pod, "e2e-"+ns)).To(gomega.Succeed())
		gomega.Expect(cluster.AppendPodLogs("e2e-"+ns, "hello from rank 0")).To(gomega.Succeed())
		gomega.Expect(out.String()).To(gomega.BeEmpty(), "nothing before the pod runs")

		var running time.Time
		gomega.Eventually(func() corev1.PodPhase {
			p := &corev1.Pod{}
			gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: pod}, p)).To(gomega.Succeed())
			running = time.Now()
			return p.Status.Phase
		}, timeout, 50*time.Millisecond).Should(gomega.Equal(corev1.PodRunning))
		gomega.Eventually(out.String, 5*time.Second, 20*time.Millisecond).Should(gomega.Equal("hello from rank 0\n"))
		gomega.Expect(time.Since(running)).To(gomega.BeNumerically("<", time.Second))

		gomega.Expect(cluster.AppendPodLogs("e2e-"+ns, "epoch 1 loss 0.5")).To(gomega.Succeed())
		gomega.Eventually(out.String, 5*time.Second).Should(gomega.Equal("hello from rank 0\nepoch 1 loss 0.5\n"))
		var code int
		gomega.Eventually(done, timeout).Should(gomega.Receive(&code))
		gomega.Expect(code).To(gomega.Equal(0), errOut.String())
		gomega.Expect(conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobComplete)).NotTo(gomega.BeNil())
	})
})

var _ = ginkgo.Describe("kubectl gantry train --follow", func() {
	ginkgo.It("streams rank 0's log and exits with the job's result", func() {
		ns := newNamespace("cli-follow")
		tj := simulate(trainJob(ns, "followed", clusterRuntime, "torch-distributed", 1, 1),
			map[string]map[string]string{"node": {simDuration: "3s"}})
		r := gantry(ctx, "train", "-n", ns, "-f", jobFile(tj), "--follow", "--timeout", "2m")
		gomega.Expect(r.code).To(gomega.Equal(0), r.stderr)
		// The first line is what train prints; then the local cluster's default training log.
		gomega.Expect(r.stdout).To(gomega.HavePrefix("trainjob.trainer.kubeflow.org/followed created\n"))
		gomega.Expect(r.stdout).To(gomega.HaveSuffix("[rank 0] training complete\n"))
		gomega.Expect(conditionTrue(getTrainJob(keyOf(tj)), trainer.TrainJobComplete)).NotTo(gomega.BeNil())
	})
})
