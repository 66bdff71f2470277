// Package install proves the installation paths: the kustomize overlays and the Helm chart (with
// default values and with everything enabled) are accepted whole by a real API server, the
// chart's Configuration is one the manager accepts and agrees with the objects around it, the
// runtime installer the chart's hooks run applies and prunes runtimes, and `helm install`,
// `helm upgrade` and `helm uninstall` work against the API server, with the hook Jobs carried
// out by the test as a kubelet would.
package install

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	fwk        = &framework.Framework{}
	k8sClient  client.Client
	ctx        context.Context
	kubeconfig string
	// gantryBin is the gantry CLI, built once: the binary the runtime installer Jobs run.
	gantryBin string
)

func TestInstall(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "Install suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	dir, err := os.MkdirTemp("", "gantry-install-")
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	ginkgo.DeferCleanup(func() { _ = os.RemoveAll(dir) })
	gantryBin = filepath.Join(dir, "gantry")
	build := exec.Command("go", "build", "-o", gantryBin, "./cmd/gantry")
	build.Dir = util.RepoRoot()
	out, err := build.CombinedOutput()
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), string(out))

	fwk.StartSuite(ctx)
	k8sClient = fwk.Client
	kubeconfig, err = fwk.WriteKubeconfig(dir)
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
})
