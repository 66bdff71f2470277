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

package migration

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/util"
)

const trainerCRDs = "trainjobs.trainer.kubeflow.org trainingruntimes.trainer.kubeflow.org clustertrainingruntimes.trainer.kubeflow.org"

// The commands of docs/migration.md, "From the Helm chart", in its order. The suite runs them as
// written (with the reference chart read from its module) and fails when the guide no longer
// shows one of them verbatim, so the guide and this test change together.
var (
	stepProtectCRDs = "kubectl annotate crd " + trainerCRDs + " helm.sh/resource-policy=keep"
	stepReleaseCRDs = "helm upgrade kubeflow-trainer " + referenceChartRef +
		" -n kubeflow-system --reuse-values --no-hooks --set crds.enabled=false --set manager.replicas=0"
	stepUninstall = "helm uninstall kubeflow-trainer -n kubeflow-system --no-hooks"
	stepLabelCRDs = "kubectl label crd " + trainerCRDs + " app.kubernetes.io/managed-by=Helm --overwrite"
	stepAdoptCRDs = "kubectl annotate crd " + trainerCRDs +
		" meta.helm.sh/release-name=gantry meta.helm.sh/release-namespace=kubeflow-system helm.sh/resource-policy- --overwrite"
	stepInstall = "helm install gantry charts/gantry -n kubeflow-system --set jobset.install=false"

	guideSteps = []string{stepProtectCRDs, stepReleaseCRDs, stepUninstall, stepLabelCRDs, stepAdoptCRDs, stepInstall}
)

// guideCommands is docs/migration.md with each shell command on one line: continuation lines
// joined, runs of blanks made one space.
func guideCommands() string {
	data, err := os.ReadFile(filepath.Join(util.RepoRoot(), "docs", "migration.md"))
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	joined := strings.ReplaceAll(string(data), "\\\n", " ")
	return regexp.MustCompile(`[ \t]+`).ReplaceAllString(joined, " ")
}

// run runs one command of the guide against the suite's control plane: kubectl as an
// administrator, helm (bin/helm) with its caches in home. It returns the command's output.
func run(home, referenceChartDir, command string) string {
	command = strings.Replace(command, referenceChartRef, referenceChartDir, 1)
	args := strings.Fields(command)
	switch args[0] {
	case "kubectl":
		out, err := env.Kubectl(args[1:]...)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		return out
	case "helm":
		cmd, err := util.HelmCommand(home, append(args[1:], "--kubeconfig", kubeconfig)...)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		gomega.Expect(cmd.Run()).To(gomega.Succeed(), "%s:\n%s", command, out.String())
		return out.String()
	}
	ginkgo.Fail("unknown command: " + command)
	return ""
}

// crd reads a CRD as unstructured: the suite's scheme does not register apiextensions.
func crd(name string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"})
	gomega.Expect(k8sClient.Get(ctx, client.ObjectKey{Name: name}, obj)).To(gomega.Succeed())
	return obj
}

// gone reports whether obj's key no longer exists.
func gone(obj client.Object) func() bool {
	return func() bool {
		err := k8sClient.Get(ctx, client.ObjectKeyFromObject(obj), obj)
		gomega.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
		return err != nil
	}
}
