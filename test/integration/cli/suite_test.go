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

// Package cli runs every verb of the gantry command line against an envtest control plane:
// stdout, stderr and the exit code of each, with golden files for the output forms.
package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/cli"
	"github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

var (
	fwk        = &framework.Framework{}
	k8sClient  client.Client
	ctx        context.Context
	kubeconfig string
	// now is the fake clock of every command: fixtures are dated relative to it.
	now time.Time
)

func TestCLI(t *testing.T) {
	gomega.RegisterFailHandler(ginkgo.Fail)
	ginkgo.RunSpecs(t, "gantry command line suite")
}

var _ = ginkgo.BeforeSuite(func() {
	ctx = context.Background()
	fwk.StartSuite(ctx)
	k8sClient = fwk.Client
	var err error
	kubeconfig, err = fwk.WriteKubeconfig(ginkgo.GinkgoT().TempDir())
	gomega.Expect(err).NotTo(gomega.HaveOccurred())
	now = createFixtures()
})

// result is what one command line did.
type result struct {
	Code   int
	Stdout string
	Stderr string
}

// gantry runs the command line in this process against the suite's control plane.
func gantry(args ...string) result {
	return gantryIn(ctx, nil, args...)
}

func gantryIn(c context.Context, stdin *bytes.Buffer, args ...string) result {
	return gantryWith(c, stdin, nil, args...)
}

// gantryWith lets the spec change the options first, e.g. wrap the REST config.
func gantryWith(c context.Context, stdin *bytes.Buffer, configure func(*cli.Options), args ...string) result {
	return gantryTo(c, stdin, &util.SyncBuffer{}, configure, args...)
}

// streaming runs a command that goes on (--watch) until the returned cancel.
func streaming(args ...string) (*util.SyncBuffer, chan result, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	out := &util.SyncBuffer{}
	done := make(chan result, 1)
	go func() {
		defer ginkgo.GinkgoRecover()
		done <- gantryTo(c, nil, out, nil, args...)
	}()
	return out, done, cancel
}

func gantryTo(c context.Context, stdin *bytes.Buffer, stdout *util.SyncBuffer, configure func(*cli.Options), args ...string) result {
	var stderr bytes.Buffer
	var in *bytes.Buffer
	if stdin != nil {
		in = stdin
	} else {
		in = &bytes.Buffer{}
	}
	o := cli.NewOptions(in, stdout, &stderr)
	o.Now = func() time.Time { return now }
	if configure != nil {
		configure(o)
	}
	root := cli.NewRootCommand(o)
	root.SetContext(c)
	code := cli.Execute(o, root, append([]string{"--kubeconfig", kubeconfig}, args...))
	return result{Code: code, Stdout: stdout.String(), Stderr: stderr.String()}
}

// volatile are the parts of an output that differ from run to run.
var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`), "UID"},
	{regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`), "TIME"},
	{regexp.MustCompile(`"resourceVersion": "\d+"|resourceVersion: "\d+"`), "RESOURCE-VERSION"},
}

func normalize(s string) string {
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	return s
}

// expectGolden compares an output with testdata/<name>.golden; UPDATE_GOLDEN=1 rewrites it.
func expectGolden(name, got string) {
	ginkgo.GinkgoHelper()
	path := filepath.Join("testdata", name+".golden")
	got = normalize(got)
	if os.Getenv("UPDATE_GOLDEN") == "1" {
		gomega.Expect(os.WriteFile(path, []byte(got), 0o644)).To(gomega.Succeed())
		return
	}
	want, err := os.ReadFile(path)
	gomega.Expect(err).NotTo(gomega.HaveOccurred(), "no golden file; run with UPDATE_GOLDEN=1")
	if diff := cmp.Diff(string(want), got); diff != "" {
		ginkgo.Fail("output differs from " + path + " (-want +got):\n" + diff)
	}
}

func lines(s string) []string {
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
