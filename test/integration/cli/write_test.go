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

package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/util"
)

// newJob creates a TrainJob of torch-cli in a fresh namespace.
func newJob(name string, labels map[string]string) *trainer.TrainJob {
	ns := util.NewNamespace(ctx, k8sClient, "cli")
	tj := fixtureJob{name: name, runtime: "torch-cli", labels: labels}.object(ns)
	gomega.Expect(k8sClient.Create(ctx, tj)).To(gomega.Succeed())
	return tj
}

func setStatus(tj *trainer.TrainJob, status trainer.TrainJobStatus) {
	ginkgo.GinkgoHelper()
	gomega.Eventually(func() error {
		cur := &trainer.TrainJob{}
		if err := k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), cur); err != nil {
			return err
		}
		cur.Status = status
		return k8sClient.Status().Update(ctx, cur)
	}).Should(gomega.Succeed())
}

// background runs a command line while the spec changes the job.
func background(args ...string) chan result {
	done := make(chan result, 1)
	go func() {
		defer ginkgo.GinkgoRecover()
		done <- gantryIn(context.Background(), nil, args...)
	}()
	return done
}

var _ = ginkgo.Describe("wait", func() {
	ginkgo.It("returns 0 once the job completes, watching it", func() {
		tj := newJob("w", nil)
		done := background("wait", tj.Name, "-n", tj.Namespace, "--timeout", "1m")
		gomega.Consistently(done, "300ms").ShouldNot(gomega.Receive())
		setStatus(tj, trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobStatus("node", 1, 1, 0, 0)}})
		gomega.Consistently(done, "300ms").ShouldNot(gomega.Receive())
		setStatus(tj, trainer.TrainJobStatus{Conditions: []metav1.Condition{condition("Complete", "AllJobsCompleted", "done", now)}})
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Code: 0, Stdout: "trainjob.trainer.kubeflow.org/w is Complete\n"}))
	})
	ginkgo.It("returns 1 as soon as the job fails while waiting for Complete", func() {
		tj := newJob("f", nil)
		done := background("wait", tj.Name, "-n", tj.Namespace)
		gomega.Consistently(done, "300ms").ShouldNot(gomega.Receive())
		setStatus(tj, trainer.TrainJobStatus{Conditions: []metav1.Condition{condition("Failed", "FailedJobs", "jobset failed: node-0", now)}})
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Code: 1, Stderr: "error: TrainJob f failed: jobset failed: node-0\n"}))
	})
	ginkgo.It("waits for Running, Failed and a condition", func() {
		gomega.Expect(gantry("wait", "bert-ft", "-n", goldenNS, "--for", "running")).To(gomega.Equal(
			result{Stdout: "trainjob.trainer.kubeflow.org/bert-ft is Running\n"}))
		gomega.Expect(gantry("wait", "mnist-fail", "-n", goldenNS, "--for", "Failed")).To(gomega.Equal(
			result{Stdout: "trainjob.trainer.kubeflow.org/mnist-fail is Failed\n"}))
		gomega.Expect(gantry("wait", "paused", "-n", goldenNS, "--for", "condition=Suspended")).To(gomega.Equal(
			result{Stdout: "trainjob.trainer.kubeflow.org/paused is condition Suspended=True\n"}))
		gomega.Expect(gantry("wait", "llama-done", "-n", goldenNS, "--for", "Suspended")).To(gomega.Equal(
			result{Code: 7, Stderr: "error: TrainJob llama-done is Complete and will never be Suspended\n"}))
	})
	ginkgo.It("times out with 3", func() {
		r := gantry("wait", "bert-ft", "-n", goldenNS, "--timeout", "1s")
		gomega.Expect(r).To(gomega.Equal(result{Code: 3,
			Stderr: "error: timed out after 1s waiting for TrainJob bert-ft to be Complete (it is Running)\n"}))
	})
	ginkgo.It("returns 4 when the job is deleted while waiting", func() {
		tj := newJob("d", nil)
		done := background("wait", tj.Name, "-n", tj.Namespace)
		gomega.Consistently(done, "300ms").ShouldNot(gomega.Receive())
		gomega.Expect(k8sClient.Delete(ctx, tj)).To(gomega.Succeed())
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Code: 4, Stderr: "error: TrainJob d was deleted while waiting for it to be Complete\n"}))
	})
})

var _ = ginkgo.Describe("suspend, resume and delete", func() {
	ginkgo.It("suspends and resumes a job", func() {
		tj := newJob("s", nil)
		gomega.Expect(gantry("suspend", "s", "-n", tj.Namespace)).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/s suspended\n"}))
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), tj)).To(gomega.Succeed())
		gomega.Expect(tj.Spec.Suspend).To(gomega.Equal(ptr.To(true)))
		gomega.Expect(gantry("resume", "s", "-n", tj.Namespace)).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/s resumed\n"}))
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), tj)).To(gomega.Succeed())
		gomega.Expect(tj.Spec.Suspend).To(gomega.Equal(ptr.To(false)))
	})
	ginkgo.It("refuses a Kueue-managed job, pointing to Kueue", func() {
		tj := newJob("k", map[string]string{"kueue.x-k8s.io/queue-name": "q"})
		r := gantry("suspend", "k", "-n", tj.Namespace)
		gomega.Expect(r.Code).To(gomega.Equal(2))
		gomega.Expect(r.Stderr).To(gomega.Equal("error: TrainJob k is managed by Kueue (queue \"q\"), which decides when it runs: use " +
			"`kubectl kueue stop workload` on its Workload (kubectl get workloads -n " + tj.Namespace +
			" -l kueue.x-k8s.io/job-uid=" + string(tj.UID) + ") instead\n"))
	})
	ginkgo.It("refuses a finished job", func() {
		r := gantry("suspend", "llama-done", "-n", goldenNS)
		gomega.Expect(r).To(gomega.Equal(result{Code: 2, Stderr: "error: TrainJob llama-done is Complete: a finished job cannot be suspended\n"}))
	})
	ginkgo.It("deletes a job and waits until it is gone", func() {
		tj := newJob("del", nil)
		// A finalizer keeps the job until the spec lets it go, so --wait must wait.
		tj.Finalizers = []string{"test.gantry.dev/hold"}
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
		done := background("delete", "del", "-n", tj.Namespace, "--wait")
		gomega.Consistently(done, "700ms").ShouldNot(gomega.Receive())
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKeyFromObject(tj), tj)).To(gomega.Succeed())
		tj.Finalizers = nil
		gomega.Expect(k8sClient.Update(ctx, tj)).To(gomega.Succeed())
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/del deleted\n"}))
		gomega.Expect(gantry("delete", "del", "-n", tj.Namespace)).To(gomega.Equal(
			result{Code: 4, Stderr: "error: TrainJob \"del\" not found in namespace \"" + tj.Namespace + "\"\n"}))
	})
})

var _ = ginkgo.Describe("train", func() {
	var ns string
	ginkgo.BeforeEach(func() { ns = util.NewNamespace(ctx, k8sClient, "train") })
	get := func(name string) *trainer.TrainJob {
		tj := &trainer.TrainJob{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, tj)).To(gomega.Succeed())
		return tj
	}

	ginkgo.It("submits a job from flags", func() {
		r := gantry("train", "-n", ns, "--name", "from-flags", "--runtime", "torch-cli", "--image", "my/image:1",
			"--nodes", "2", "--gpus-per-node", "1", "--env", "EPOCHS=3", "--queue", "q", "--", "python", "train.py", "--lr", "0.1")
		gomega.Expect(r).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/from-flags created\n"}))
		tj := get("from-flags")
		gomega.Expect(tj.Labels).To(gomega.HaveKeyWithValue("kueue.x-k8s.io/queue-name", "q"))
		gomega.Expect(*tj.Spec.RuntimeRef.Kind).To(gomega.Equal("ClusterTrainingRuntime"))
		gomega.Expect(*tj.Spec.Trainer.Image).To(gomega.Equal("my/image:1"))
		gomega.Expect(tj.Spec.Trainer.Command).To(gomega.Equal([]string{"python", "train.py", "--lr", "0.1"}))
		gomega.Expect(*tj.Spec.Trainer.NumNodes).To(gomega.Equal(int32(2)))
		gomega.Expect(tj.Spec.Trainer.Env).To(gomega.Equal([]corev1.EnvVar{{Name: "EPOCHS", Value: "3"}}))
		gomega.Expect(tj.Spec.Trainer.ResourcesPerNode.Limits).To(gomega.HaveKey(corev1.ResourceName("nvidia.com/gpu")))
	})
	ginkgo.It("names a job as the SDK does and finds the namespace's runtime first", func() {
		gomega.Expect(k8sClient.Create(ctx, &trainer.TrainingRuntime{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "torch-cli", Labels: map[string]string{trainer.FrameworkLabel: "torch"}},
			Spec:       runtimeSpec(1, "x", 0),
		})).To(gomega.Succeed())
		r := gantry("train", "-n", ns, "--runtime", "torch-cli", "-o", "name")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(r.Stdout).To(gomega.MatchRegexp(`^trainjob.trainer.kubeflow.org/[a-z][0-9a-f]{11}\n$`))
		list := &trainer.TrainJobList{}
		gomega.Expect(k8sClient.List(ctx, list, client.InNamespace(ns))).To(gomega.Succeed())
		gomega.Expect(list.Items).To(gomega.HaveLen(1))
		gomega.Expect(*list.Items[0].Spec.RuntimeRef.Kind).To(gomega.Equal("TrainingRuntime"))
	})
	ginkgo.It("submits a file, from standard input too", func() {
		job := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: from-file\nspec:\n  runtimeRef:\n    name: torch-cli\n"
		path := filepath.Join(ginkgo.GinkgoT().TempDir(), "job.yaml")
		gomega.Expect(os.WriteFile(path, []byte(job), 0o600)).To(gomega.Succeed())
		gomega.Expect(gantry("train", "-n", ns, "-f", path)).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/from-file created\n"}))
		r := gantryIn(ctx, bytes.NewBufferString(job), "train", "-n", ns, "-f", "-", "--name", "from-stdin")
		gomega.Expect(r).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/from-stdin created\n"}))
		get("from-stdin")
	})
	ginkgo.It("names a misspelt field of the file", func() {
		job := "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\nmetadata:\n  name: typo\nspec:\n  runtimeRef:\n    name: torch-cli\n  trainer:\n    numNode: 2\n"
		r := gantryIn(ctx, bytes.NewBufferString(job), "train", "-n", ns, "-f", "-")
		gomega.Expect(r.Code).To(gomega.Equal(2))
		gomega.Expect(r.Stderr).To(gomega.ContainSubstring(`unknown field "spec.trainer.numNode"`))
	})
	ginkgo.It("admits without creating on --dry-run=server", func() {
		r := gantry("train", "-n", ns, "--name", "dry", "--runtime", "torch-cli", "--dry-run=server")
		gomega.Expect(r).To(gomega.Equal(result{Stdout: "trainjob.trainer.kubeflow.org/dry created (server dry run)\n"}))
		err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "dry"}, &trainer.TrainJob{})
		gomega.Expect(apierrors.IsNotFound(err)).To(gomega.BeTrue())
	})
	ginkgo.It("renders on --dry-run=client, with the cluster's runtime", func() {
		r := gantry("train", "-n", goldenNS, "--name", "rendered", "--runtime", "torch-cli", "--nodes", "2", "--dry-run=client")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		expectGolden("train-dry-run-client", r.Stdout)
	})
	ginkgo.It("refuses what cannot work", func() {
		for args, msg := range map[string]string{
			"":                                    "error: give -f FILE or --runtime NAME\n",
			"--runtime nope":                      "error: runtime \"nope\" not found: no TrainingRuntime in namespace \"" + ns + "\" and no ClusterTrainingRuntime\n",
			"--runtime torch-cli --env X":         "error: --env \"X\": want NAME=VALUE\n",
			"--runtime torch-cli --wait --follow": "error: give --wait or --follow, not both (--follow waits too)\n",
			"--runtime torch-cli --dry-run=x":     "error: --dry-run must be \"none\", \"client\" or \"server\", got \"x\"\n",
		} {
			r := gantry(append([]string{"train", "-n", ns}, splitArgs(args)...)...)
			gomega.Expect(r.Stderr).To(gomega.Equal(msg), args)
			gomega.Expect(r.Code).NotTo(gomega.Equal(0))
		}
	})
	ginkgo.It("waits for the job it submitted", func() {
		done := background("train", "-n", ns, "--name", "waited", "--runtime", "torch-cli", "--wait", "--timeout", "1m")
		var tj *trainer.TrainJob
		gomega.Eventually(func() error {
			tj = &trainer.TrainJob{}
			return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "waited"}, tj)
		}).Should(gomega.Succeed())
		setStatus(tj, trainer.TrainJobStatus{Conditions: []metav1.Condition{condition("Failed", "FailedJobs", "boom", time.Now())}})
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Code: 1, Stdout: "trainjob.trainer.kubeflow.org/waited created\n",
			Stderr: "error: TrainJob waited failed: boom\n"}))
	})
})

func splitArgs(s string) []string {
	return strings.Fields(s)
}

var _ = ginkgo.Describe("--watch", func() {
	ginkgo.It("list prints a job again when it changes", func() {
		tj := newJob("watched", nil)
		out, done, cancel := streaming("list", "-n", tj.Namespace, "--watch", "--no-headers")
		gomega.Eventually(out.String).Should(gomega.MatchRegexp(`^watched\s+Created\s`))
		setStatus(tj, trainer.TrainJobStatus{JobsStatus: []trainer.JobStatus{jobStatus("node", 1, 1, 0, 0)}})
		gomega.Eventually(out.String).Should(gomega.MatchRegexp(`(?m)^watched\s+Running\s`))
		cancel()
		var r result
		gomega.Eventually(done, "10s").Should(gomega.Receive(&r))
		gomega.Expect(r).To(gomega.Equal(result{Stdout: out.String()}), "a watch the user stops ends with 0")
	})
	ginkgo.It("events prints new events of the job only", func() {
		tj := newJob("ev", nil)
		out, done, cancel := streaming("events", tj.Name, "-n", tj.Namespace, "--watch")
		gomega.Eventually(out.String).Should(gomega.Equal("<none>\n"))
		for _, name := range []string{"ev", "other"} {
			gomega.Expect(k8sClient.Create(ctx, &corev1.Event{
				ObjectMeta:     metav1.ObjectMeta{Namespace: tj.Namespace, GenerateName: name + "."},
				InvolvedObject: corev1.ObjectReference{Kind: "TrainJob", Name: name, Namespace: tj.Namespace},
				Reason:         "Poked", Message: "about " + name, Type: corev1.EventTypeNormal,
				LastTimestamp: metav1.NewTime(now.Add(-time.Minute)),
			})).To(gomega.Succeed())
		}
		gomega.Eventually(out.String).Should(gomega.MatchRegexp(`(?m)^60s\s+Normal\s+Poked\s+trainjob/ev\s+about ev$`))
		gomega.Consistently(out.String, "300ms").ShouldNot(gomega.ContainSubstring("about other"))
		cancel()
		gomega.Eventually(done, "10s").Should(gomega.Receive())
	})
})

var _ = ginkgo.Describe("ui", func() {
	ginkgo.It("serves on loopback with a login link whose token --token-file keeps across restarts", func() {
		tokenFile := filepath.Join(ginkgo.GinkgoT().TempDir(), "token")
		link := func() string {
			out, done, cancel := streaming("ui", "--token-file", tokenFile, "--address", "127.0.0.1:0")
			defer func() {
				cancel()
				gomega.Eventually(done, "10s").Should(gomega.Receive())
			}()
			gomega.Eventually(out.String, "30s").Should(gomega.MatchRegexp(`^Gantry UI: http://127\.0\.0\.1:\d+/jobs\?token=[0-9a-f]{48}\n$`))
			l := strings.TrimSpace(strings.TrimPrefix(out.String(), "Gantry UI: "))
			jar, err := cookiejar.New(nil)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			resp, err := (&http.Client{Jar: jar}).Get(l) //nolint:noctx // the link the UI printed, on loopback
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
			_ = resp.Body.Close()
			gomega.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK), "the link logs in and shows the Jobs page")
			return l[strings.Index(l, "token="):]
		}
		first := link()
		saved, err := os.ReadFile(tokenFile)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect("token=" + strings.TrimSpace(string(saved))).To(gomega.Equal(first))
		gomega.Expect(link()).To(gomega.Equal(first), "a restarted UI keeps its link")

		r := gantry("ui", "--address", "0.0.0.0:0")
		gomega.Expect(r.Code).To(gomega.Equal(2))
		gomega.Expect(r.Stderr).To(gomega.Equal("error: --address \"0.0.0.0:0\": kubeconfig mode serves your own identity, so it listens on loopback only (127.0.0.1)\n"))
	})

	ginkgo.It("runs gantry-ui when it is installed beside gantry, with the flags gantry-ui takes", func() {
		dir := ginkgo.GinkgoT().TempDir()
		for _, name := range []string{"gantry", "gantry-ui"} {
			_, err := util.BuildCmd(dir, name)
			gomega.Expect(err).NotTo(gomega.HaveOccurred())
		}
		gomega.Expect(os.Link(filepath.Join(dir, "gantry"), filepath.Join(dir, "kubectl-gantry"))).To(gomega.Succeed())
		ns := util.NewNamespace(ctx, k8sClient, "lean-ui")
		// As kubectl runs the plugin: kubectl-gantry, a hard link to gantry.
		cmd, line := util.StartFirstLine(filepath.Join(dir, "kubectl-gantry"), "ui", "--kubeconfig", kubeconfig, "-n", ns,
			"--address", "127.0.0.1:0", "--request-timeout", "20s", "--cache-dir", dir)
		gomega.Expect(line).To(gomega.MatchRegexp(`^Gantry UI: http://127\.0\.0\.1:\d+/jobs\?token=[0-9a-f]{48}\n$`))

		exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", cmd.Process.Pid))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(exe).To(gomega.Equal(filepath.Join(dir, "gantry-ui")), "the process is gantry-ui now")
		cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", cmd.Process.Pid))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		args := strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")[1:]
		gomega.Expect(args).To(gomega.ConsistOf("--address=127.0.0.1:0", "--kubeconfig="+kubeconfig, "--namespace="+ns,
			"--request-timeout=20s"), "the UI's and the connection flags, not the CLI's own (--cache-dir)")

		jar, err := cookiejar.New(nil)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		resp, err := (&http.Client{Jar: jar}).Get(strings.TrimSpace(strings.TrimPrefix(line, "Gantry UI: "))) //nolint:noctx // loopback
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		_ = resp.Body.Close()
		gomega.Expect(resp.StatusCode).To(gomega.Equal(http.StatusOK))

		// A flag only the CLI honours keeps the UI in the gantry process.
		inProcess, line := util.StartFirstLine(filepath.Join(dir, "gantry"), "ui", "--kubeconfig", kubeconfig, "--address", "127.0.0.1:0",
			"--as", "admin", "--as-group", "system:masters", "--as-user-extra", "team=a")
		gomega.Expect(line).To(gomega.HavePrefix("Gantry UI: http://127.0.0.1:"))
		exe, err = os.Readlink(fmt.Sprintf("/proc/%d/exe", inProcess.Process.Pid))
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Expect(exe).To(gomega.Equal(filepath.Join(dir, "gantry")), "--as-user-extra is served in process")
	})
})
