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

package manager

import (
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/gantry-ml/gantry/test/util"
)

var _ = ginkgo.Describe("The manager binary without JobSet", func() {
	ginkgo.It("stops at start-up with a clear error", func() {
		assets, err := util.EnvtestAssets()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		bare := &envtest.Environment{BinaryAssetsDirectory: assets}
		_, err = bare.Start()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		ginkgo.DeferCleanup(func() { gomega.Expect(bare.Stop()).To(gomega.Succeed()) })
		user, err := bare.ControlPlane.AddUser(envtest.User{Name: "admin", Groups: []string{"system:masters"}}, nil)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		kc, err := user.KubeConfig()
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		dir := ginkgo.GinkgoT().TempDir()
		gomega.Expect(os.WriteFile(filepath.Join(dir, "kubeconfig"), kc, 0o600)).To(gomega.Succeed())
		config := "apiVersion: config.trainer.kubeflow.org/v1alpha1\nkind: Configuration\n" +
			"metrics: {bindAddress: \"0\"}\nhealth: {healthProbeBindAddress: \"0\"}\n" +
			"leaderElection: {leaderElect: false}\ncertManagement: {enable: false}\n"
		gomega.Expect(os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(config), 0o600)).To(gomega.Succeed())

		// An empty certificate directory, as on a fresh install: the error must not wait for a
		// serving certificate that nothing will write.
		certs := filepath.Join(dir, "certs")
		gomega.Expect(os.Mkdir(certs, 0o700)).To(gomega.Succeed())
		cmd := exec.Command(binary, "--config", filepath.Join(dir, "config.yaml"), "--webhook-cert-dir", certs)
		cmd.Env = append(os.Environ(), "KUBECONFIG="+filepath.Join(dir, "kubeconfig"))
		session, err := gexec.Start(cmd, ginkgo.GinkgoWriter, ginkgo.GinkgoWriter)
		gomega.Expect(err).NotTo(gomega.HaveOccurred())
		gomega.Eventually(session, 30*time.Second).Should(gexec.Exit(1))
		gomega.Expect(string(session.Err.Contents())).To(gomega.ContainSubstring(
			"the JobSet CRD (jobsets.jobset.x-k8s.io v1alpha2) is not installed: install JobSet before Gantry"))
	})
})
