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
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
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
	installer.Run(job.Spec.Template.Spec, func(cm string) map[string]string {
		obj := &corev1.ConfigMap{}
		gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Namespace: ns, Name: cm}, obj)).To(gomega.Succeed())
		return obj.Data
	})
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

// The chart through helm itself, against the API server: the first install creates the CRDs and
// the runtimes in one step (the runtimes through the post-install hook), upgrades add and prune
// runtimes, uninstall removes them and keeps the CRDs.
var _ = ginkgo.Describe("helm install, upgrade and uninstall", ginkgo.Ordered, func() {
	const ns = "gantry-system"
	var home string

	ginkgo.BeforeAll(func() {
		var err error
		home, err = os.MkdirTemp("", "gantry-helm-home-")
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { _ = os.RemoveAll(home) })
		// The suite's control plane has no Gantry CRDs: the chart brings its own.
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeFalse(), name)
		}
	})

	ginkgo.It("installs in one step: CRDs, JobSet, the manager and the runtimes", func() {
		run := startHelm(home, "install", "gantry", util.ChartDir(), "--namespace", ns, "--create-namespace",
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
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "jobset-controller")).To(gomega.BeTrue())
		gomega.Expect(exists(&corev1.ConfigMap{}, ns, "kubeflow-trainer-public")).To(gomega.BeTrue())
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "deepspeed-distributed"))
	})

	ginkgo.It("upgrades: the runtimes follow the values", func() {
		run := startHelm(home, "upgrade", "gantry", util.ChartDir(), "--namespace", ns, "--reuse-values",
			"--set", "runtimes.deepspeedDistributed.enabled=false", "--set", "runtimes.jaxDistributed.enabled=true",
			"--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-installer")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("STATUS: deployed"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.ConsistOf("torch-distributed", "jax-distributed"))
	})

	ginkgo.It("uninstalls: the runtimes and the manager go, the CRDs stay", func() {
		run := startHelm(home, "uninstall", "gantry", "--namespace", ns, "--timeout", "2m")
		completeHook(ns, "kubeflow-trainer-runtime-cleanup")
		gomega.Expect(run.wait()).To(gomega.ContainSubstring("release \"gantry\" uninstalled"))
		gomega.Expect(installer.RuntimeNames(ctx, framework.ReleaseRuntimes)).To(gomega.BeEmpty())
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "kubeflow-trainer-controller-manager")).To(gomega.BeFalse())
		gomega.Expect(exists(&appsv1.Deployment{}, ns, "jobset-controller")).To(gomega.BeFalse())
		for _, name := range gantryCRDs {
			gomega.Expect(exists(crd(name), "", name)).To(gomega.BeTrue(), "%s is kept", name)
		}
	})
})
