package install

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// ours selects the runtimes that release "gantry" installs.
const ours = "app.kubernetes.io/instance=gantry,app.kubernetes.io/managed-by=gantry-runtime-installer"

// runInstaller runs the command of a runtime installer Job's container as a kubelet would: each
// ConfigMap volume becomes a directory holding the ConfigMap's data, and the arguments that name
// a mount path point there instead. configMap returns a ConfigMap's data by name.
func runInstaller(spec corev1.PodSpec, configMap func(name string) map[string]string) string {
	c := spec.Containers[0]
	gomega.Expect(c.Command).To(gomega.Equal([]string{"/gantry"}))
	mounts := map[string]string{}
	for _, v := range spec.Volumes {
		gomega.Expect(v.ConfigMap).NotTo(gomega.BeNil(), "the installer mounts only ConfigMaps")
		dir := ginkgo.GinkgoT().TempDir()
		for file, data := range configMap(v.ConfigMap.Name) {
			gomega.Expect(os.WriteFile(filepath.Join(dir, file), []byte(data), 0o600)).To(gomega.Succeed())
		}
		for _, m := range c.VolumeMounts {
			if m.Name == v.Name {
				mounts[m.MountPath] = dir
			}
		}
	}
	args := make([]string, 0, len(c.Args)+2)
	for _, a := range c.Args {
		for path, dir := range mounts {
			a = strings.Replace(a, "="+path, "="+dir, 1)
		}
		args = append(args, a)
	}
	cmd := exec.Command(gantryBin, append(args, "--kubeconfig", kubeconfig)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	gomega.Expect(cmd.Run()).To(gomega.Succeed(), "gantry %v:\n%s", args, out.String())
	return out.String()
}

// renderedHook returns the rendered Job with the given helm.sh/hook annotation.
func renderedHook(objs []*unstructured.Unstructured, hook string) *batchv1.Job {
	for _, o := range objs {
		if o.GetKind() == "Job" && o.GetAnnotations()["helm.sh/hook"] == hook {
			job := &batchv1.Job{}
			fromUnstructured(o, job)
			return job
		}
	}
	ginkgo.Fail("the chart renders no Job with helm.sh/hook " + hook)
	return nil
}

// renderedConfigMaps resolves ConfigMap names among rendered objects.
func renderedConfigMaps(objs []*unstructured.Unstructured) func(string) map[string]string {
	return func(name string) map[string]string {
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetName() == name {
				data, _, err := unstructured.NestedStringMap(o.Object, "data")
				gomega.Expect(err).NotTo(gomega.HaveOccurred())
				return data
			}
		}
		ginkgo.Fail("the chart renders no ConfigMap " + name)
		return nil
	}
}

// runtimeNames lists the ClusterTrainingRuntimes matching a label selector.
func runtimeNames(selector string) []string {
	sel, err := labels.Parse(selector)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind + "List"))
	gomega.Expect(k8sClient.List(ctx, list, client.MatchingLabelsSelector{Selector: sel})).To(gomega.Succeed())
	names := []string{}
	for _, o := range list.Items {
		names = append(names, o.Name)
	}
	return names
}

// runtimeExists reports whether the named ClusterTrainingRuntime exists.
func runtimeExists(name string) bool {
	err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, &trainer.ClusterTrainingRuntime{})
	gomega.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	return err == nil
}
