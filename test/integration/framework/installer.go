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

package framework

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/test/util"
)

// ReleaseRuntimes selects the runtimes that the chart's installer of release "gantry" installs.
const ReleaseRuntimes = "app.kubernetes.io/instance=gantry,app.kubernetes.io/managed-by=gantry-runtime-installer"

// Installer carries out the chart's runtime installer Jobs against the suite's control plane,
// as a kubelet would: with the gantry CLI built from this checkout.
type Installer struct {
	bin        string
	Kubeconfig string
	client     client.Client
}

// StartSuiteInstaller builds the gantry CLI and writes an administrator kubeconfig, both in a
// directory removed when the suite ends. Call it from BeforeSuite after StartSuite.
func (f *Framework) StartSuiteInstaller() *Installer {
	dir, err := os.MkdirTemp("", "gantry-installer-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { _ = os.RemoveAll(dir) })
	in := &Installer{bin: filepath.Join(dir, "gantry"), client: f.Client}
	build := exec.Command("go", "build", "-o", in.bin, "./cmd/gantry")
	build.Dir = util.RepoRoot()
	out, err := build.CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))
	in.Kubeconfig, err = f.WriteKubeconfig(dir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	return in
}

// Run runs the command of a runtime installer Job's container: each ConfigMap volume becomes a
// directory holding the ConfigMap's data, and the arguments that name a mount path point there
// instead. configMap returns a ConfigMap's data by name. It returns the command's output.
func (in *Installer) Run(spec corev1.PodSpec, configMap func(name string) map[string]string) string {
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
	cmd := exec.Command(in.bin, append(args, "--kubeconfig", in.Kubeconfig)...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	gomega.Expect(cmd.Run()).To(gomega.Succeed(), "gantry %v:\n%s", args, out.String())
	return out.String()
}

// RuntimeNames lists the ClusterTrainingRuntimes matching a label selector.
func (in *Installer) RuntimeNames(ctx context.Context, selector string) []string {
	sel, err := labels.Parse(selector)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(trainer.GroupVersion.WithKind(trainer.ClusterTrainingRuntimeKind + "List"))
	gomega.Expect(in.client.List(ctx, list, client.MatchingLabelsSelector{Selector: sel})).To(gomega.Succeed())
	names := []string{}
	for _, o := range list.Items {
		names = append(names, o.Name)
	}
	return names
}
