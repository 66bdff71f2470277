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

package util

import (
	"bufio"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
)

// BuildCmd builds the checkout's cmd/<name> into dir, with the build tags given (such as
// "faults", for a suite that injects them), and returns the binary's path.
func BuildCmd(dir, name string, tags ...string) (string, error) {
	bin := filepath.Join(dir, name)
	args := []string{"build", "-o", bin}
	if len(tags) > 0 {
		args = append(args, "-tags", strings.Join(tags, ","))
	}
	if out, err := exec.Command("go", append(args, filepath.Join(RepoRoot(), "cmd", name))...).CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %w\n%s", name, err, out)
	}
	return bin, nil
}

// StartFirstLine starts bin with args in a Ginkgo spec, killed when the spec ends, and returns
// the process and the first line it prints (a server's address, such as the UI's login link).
func StartFirstLine(bin string, args ...string) (*exec.Cmd, string) {
	ginkgo.GinkgoHelper()
	cmd := exec.Command(bin, args...)
	stdout, err := cmd.StdoutPipe()
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	cmd.Stderr = ginkgo.GinkgoWriter
	gomega.Expect(cmd.Start()).To(gomega.Succeed())
	ginkgo.DeferCleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stdout).ReadString('\n')
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "%s printed no line", bin)
	return cmd, line
}
