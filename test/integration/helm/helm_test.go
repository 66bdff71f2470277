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

package helm

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// crd is a CRD's metadata; the suite's scheme does not register apiextensions.
func crd(name string) *metav1.PartialObjectMetadata {
	obj := &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: name}}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	return obj
}

var gantryCRDs = []string{
	"clustertrainingruntimes.trainer.kubeflow.org", "trainingruntimes.trainer.kubeflow.org", "trainjobs.trainer.kubeflow.org",
}

// helmRun is one helm command in flight.
type helmRun struct {
	cmd *exec.Cmd
	out bytes.Buffer
}

func startHelm(home string, args ...string) *helmRun {
	cmd, err := util.HelmCommand(home, append(args, "--kubeconfig", installer.Kubeconfig)...)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	r := &helmRun{cmd: cmd}
	cmd.Stdout, cmd.Stderr = &r.out, &r.out
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	return r
}

func (r *helmRun) wait() string {
	err := r.cmd.Wait()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "helm %v:\n%s", r.cmd.Args[1:], r.out.String())
	return r.out.String()
}

// completeHook does what a kubelet and the Job controller would do for the hook Job helm is
// waiting on: it runs the container's command, then marks the Job complete.
func completeHook(ns, name string) {
	job := &batchv1.Job{}
	gomega.Eventually(func() error {
		return k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, job)
	}, time.Minute, util.Interval).Should(gomega.Succeed(), "helm creates the hook Job %s", name)
	out := installer.Run(job.Spec.Template.Spec, func(cm string) map[string]string {
		obj := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: cm}, obj)).To(gomega.Succeed())
		return obj.Data
	})
	ginkgo.GinkgoWriter.Printf("hook Job %s ran: %s\n", name, out)
	now := metav1.Now()
	job.Status.StartTime = &now
	job.Status.CompletionTime = &now
	job.Status.Succeeded = 1
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobSuccessCriteriaMet, Status: corev1.ConditionTrue, LastTransitionTime: now},
		{Type: batchv1.JobComplete, Status: corev1.ConditionTrue, LastTransitionTime: now},
	}
	gomega.Expect(k8sClient.Status().Update(ctx, job)).To(gomega.Succeed())
	// hook-succeeded: helm deletes the Job once it has seen it complete.
	gomega.Eventually(func() bool {
		return apierrors.IsNotFound(k8sClient.Get(ctx, client.ObjectKeyFromObject(job), &batchv1.Job{}))
	}, time.Minute, util.Interval).Should(gomega.BeTrue(), "helm deletes the succeeded hook Job")
}

func exists(obj client.Object, ns, name string) bool {
	err := k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, obj)
	gomega.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	return err == nil
}

// packageChart packages the chart, JobSet's included, into dir and returns the archive: the suite
// installs what users receive, not the checkout.
func packageChart(home, dir string) string {
	startHelm(home, "package", util.ChartDir(), "--destination", dir).wait()
	archives, err := filepath.Glob(filepath.Join(dir, "gantry-*.tgz"))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	gomega.Expect(archives).To(gomega.HaveLen(1))
	return archives[0]
}

// expectNoHookJob checks that helm, which returned, created no hook Job in the release namespace:
// one it had created would have held it until the Job ended, which nothing here would do.
func expectNoHookJob(ns string) {
	jobs := &batchv1.JobList{}
	gomega.Expect(k8sClient.List(ctx, jobs, client.InNamespace(ns))).To(gomega.Succeed())
	gomega.Expect(jobs.Items).To(gomega.BeEmpty())
}

// The packaged chart through helm itself, against the API server: values shaped like Kubeflow
// Trainer's chart are refused; the first install creates the CRDs and the runtimes in one step
// (the runtimes through the post-install hook); upgrades add and prune runtimes; an upgrade with
// nothing to prune and an install with no runtime create no hook Job, so they cannot hang;
// uninstall removes the runtimes and keeps the CRDs.
var _ = ginkgo.Describe("helm install, upgrade and uninstall of the packaged chart", ginkgo.Ordered, func() {
	const ns = "gantry-system"
	var home, chart string

	ginkgo.BeforeAll(func() {
		var err error
		home, err = os.MkdirTemp("", "gantry-helm-home-")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { _ = os.RemoveAll(home) })
		chart = packageChart(home, filepath.Join(home, "dist"))
		// The suite's control plane has no Gantry CRDs: the chart brings its own.
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeFalse(), name)
		}
	})

	ginkgo.It("refuses values written for Kubeflow Trainer's chart, naming each wrong value", func() {
		values := filepath.Join(util.RepoRoot(), "test", "integration", "helm", "testdata", "upstream-values.yaml")
		cmd, err := util.HelmCommand(home, "install", "gantry", chart, "--namespace", ns, "--create-namespace",
			"-f", values, "--kubeconfig", installer.Kubeconfig)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		out, err := cmd.CombinedOutput()
		gomega.Expect(err).To(gomega.HaveOccurred(), string(out))
		for _, want := range []string{
			"at '/manager': additional properties 'selectorLabels' not allowed",
			"at '/runtimes/deepspeedDistributed/image': got object, want string",
			"at '/runtimes/installer': additional properties 'image' not allowed",
			"at '': additional properties 'dataCache' not allowed",
		} {
			gomega.Expect(string(out)).To(gomega.ContainSubstring(want))
		}
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeFalse(), "%s: nothing is installed", name)
		}
	})

	ginkgo.It("installs in one step: CRDs, JobSet, the manager, its budget, user RBAC and the runtimes", func() {
		run := startHelm(home, "install", "gantry", chart, "--namespace", ns, "--create-namespace",
			"--set", "runtimes.torchDistributed.enabled=true", "--set", "runtimes.deepspeedDistributed.enabled=true",
			"--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-installer")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("STATUS: deployed"))

		for _, name := range gantryCRDs {
			obj := crd(name)
			gomega.Expect(exists(obj, "", name)).To(gomega.BeTrue(), name)
			gomega.Expect(obj.Annotations).To(gomega.HaveKeyWithValue("meta.helm.sh/release-name", "gantry"))
		}
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "kubeflow-trainer-controller-manager")).To(gomega.BeTrue())
		gomega.Expect(exists(&policyv1.PodDisruptionBudget{}, ns, "kubeflow-trainer-controller-manager")).To(gomega.BeTrue())
		gomega.Expect(exists(&rbacv1.ClusterRole{}, "", "kubeflow-trainer-edit")).To(gomega.BeTrue())
		gomega.Expect(exists(&rbacv1.ClusterRoleBinding{}, "", "kubeflow-trainer-view-cluster-runtimes")).To(gomega.BeTrue())
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "jobset-controller")).To(gomega.BeTrue())
		gomega.Expect(exists(&corev1.ConfigMap{}, ns, "kubeflow-trainer-public")).To(gomega.BeTrue())
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "deepspeed-distributed"))

		// Helm keeps each revision in one Secret, the CRDs (with whole descriptions) twice: in the
		// chart's files and in the rendered manifest. A Secret holds at most 1 MiB.
		release := &corev1.Secret{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: "sh.helm.release.v1.gantry.v1"}, release)).To(gomega.Succeed())
		size := len(release.Data["release"])
		ginkgo.AddReportEntry("helm release Secret bytes", size)
		gomega.Expect(size).To(gomega.BeNumerically("<", 1<<20), "the release Secret outgrows the 1 MiB a Secret may hold")
	})

	ginkgo.It("upgrades: the runtimes follow the values", func() {
		run := startHelm(home, "upgrade", "gantry", chart, "--namespace", ns, "--reuse-values",
			"--set", "runtimes.deepspeedDistributed.enabled=false", "--set", "runtimes.jaxDistributed.enabled=true",
			"--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-installer")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("STATUS: deployed"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "jax-distributed"))
	})

	ginkgo.It("upgrades to no runtime: the installer runs once more, to prune them all", func() {
		run := startHelm(home, "upgrade", "gantry", chart, "--namespace", ns, "--reset-values", "--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-installer")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("STATUS: deployed"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.BeEmpty())
	})

	ginkgo.It("upgrades with nothing to prune without any hook Job", func() {
		out := startHelm(home, "upgrade", "gantry", chart, "--namespace", ns, "--reset-values", "--timeout", "1m").wait()
		gomega.Expect(out).To(gomega.ContainSubstring("STATUS: deployed"))
		gomega.Expect(out).To(gomega.ContainSubstring("No ClusterTrainingRuntime is installed by this release"))
		expectNoHookJob(ns)
	})

	ginkgo.It("uninstalls: the manager goes, the CRDs stay", func() {
		out := startHelm(home, "uninstall", "gantry", "--namespace", ns, "--timeout", "1m").wait()
		gomega.Expect(out).To(gomega.ContainSubstring("release \"gantry\" uninstalled"))
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "kubeflow-trainer-controller-manager")).To(gomega.BeFalse())
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "jobset-controller")).To(gomega.BeFalse())
		gomega.Expect(exists(&rbacv1.ClusterRole{}, "", "kubeflow-trainer-edit")).To(gomega.BeFalse())
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeTrue(), "%s is kept", name)
		}
	})

	ginkgo.It("installs with the default values without any hook Job, adopting the kept CRDs", func() {
		out := startHelm(home, "install", "gantry", chart, "--namespace", ns, "--timeout", "1m").wait()
		gomega.Expect(out).To(gomega.ContainSubstring("STATUS: deployed"))
		expectNoHookJob(ns)
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "kubeflow-trainer-controller-manager")).To(gomega.BeTrue())
	})

	ginkgo.It("uninstalls a release with runtimes: they go first, the CRDs stay", func() {
		run := startHelm(home, "upgrade", "gantry", chart, "--namespace", ns, "--set", "runtimes.xgboostDistributed.enabled=true",
			"--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-installer")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("STATUS: deployed"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("xgboost-distributed"))

		run = startHelm(home, "uninstall", "gantry", "--namespace", ns, "--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-cleanup")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("release \"gantry\" uninstalled"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.BeEmpty())
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeTrue(), "%s is kept", name)
		}
	})
})
