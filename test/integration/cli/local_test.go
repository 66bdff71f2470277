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
	"os"
	"path/filepath"
	"time"

	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"

	"github.com/gantry-ml/gantry/internal/localrun"
	"github.com/gantry-ml/gantry/test/util"
)

// gantry run --local's command line; the real runs are test/localrun's.
var _ = ginkgo.Describe("run --local", func() {
	job := filepath.Join(util.RepoRoot(), "test", "localrun", "testdata", "job.yaml")

	ginkgo.DescribeTable("refuses a wrong command line with exit code 2",
		func(want string, args ...string) {
			r := gantry(args...)
			gomega.Expect(r.Code).To(gomega.Equal(2), r.Stderr)
			gomega.Expect(r.Stderr).To(gomega.ContainSubstring(want))
		},
		ginkgo.Entry("without --local", "gantry run runs on this machine only: give --local (gantry train submits to the cluster)", "run", "-f", job),
		ginkgo.Entry("without a file", "give the TrainJob with -f FILE", "run", "--local"),
		ginkgo.Entry("-o yaml", `-o: only "json", with --dry-run`, "run", "--local", "-f", job, "--dry-run", "-o", "yaml"),
		ginkgo.Entry("a runtime source", `--runtime-source must be "auto", "cluster" or "shipped", got "disk"`, "run", "--local", "-f", job, "--runtime-source", "disk"),
		ginkgo.Entry("an absent file", "no such file or directory", "run", "--local", "-f", "absent.yaml"),
		ginkgo.Entry("-f on a local run's logs", "-f does not apply to --local", "logs", "--local", "ddp", "-f"),
	)

	ginkgo.It("plans with the cluster's runtime and exits 4 for a runtime nowhere to be found", func() {
		r := gantry("run", "--local", "-f", job, "--dry-run", "--runtime-source", "cluster")
		gomega.Expect(r.Code).To(gomega.Equal(4), r.Stderr)
		gomega.Expect(r.Stderr).To(gomega.Equal("error: ClusterTrainingRuntime \"torch-distributed\" is neither in the files nor on the cluster\n"))

		r = gantry("run", "--local", "-f", job, "--dry-run")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(r.Stderr).To(gomega.ContainSubstring(`warning: using the ClusterTrainingRuntime "torch-distributed" Gantry ships`))
		gomega.Expect(r.Stdout).To(gomega.ContainSubstring("node-1  1      -      /usr/bin/torchrun ddp.py\n"))

		// A TrainJob without a namespace is in -n's, as kubectl would create it.
		r = gantry("run", "--local", "-f", job, "--dry-run", "-n", "team-a", "--runtime-source", "shipped")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(r.Stdout).To(gomega.HavePrefix("Plan of TrainJob team-a/ddp in "))
	})

	ginkgo.It("refuses what the cluster would refuse, naming the field", func() {
		bad := filepath.Join(ginkgo.GinkgoT().TempDir(), "bad.yaml")
		gomega.Expect(os.WriteFile(bad, []byte(`apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: bad
spec:
  runtimeRef:
    name: torch-distributed
  trainer:
    command: [torchrun, train.py]
    numNodes: -1
`), 0o644)).To(gomega.Succeed())
		r := gantry("run", "--local", "-f", bad, "--dry-run", "--runtime-source", "shipped")
		gomega.Expect(r.Code).To(gomega.Equal(2), r.Stderr)
		gomega.Expect(r.Stderr).To(gomega.ContainSubstring("spec.trainer.numNodes"))
		gomega.Expect(r.Stdout).To(gomega.BeEmpty())
	})

	ginkgo.It("shows a recorded run with get --local and logs --local, and names the steps there are", func() {
		dir := ginkgo.GinkgoT().TempDir()
		gomega.Expect(os.MkdirAll(filepath.Join(dir, "logs"), 0o755)).To(gomega.Succeed())
		gomega.Expect(os.WriteFile(localrun.LogPath(dir, "node-0"), []byte("one\ntwo\nthree\n"), 0o644)).To(gomega.Succeed())
		start := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
		end := start.Add(14 * time.Second)
		rec := `{"apiVersion":"gantry.dev/v1","kind":"LocalRun","trainJob":"ddp","namespace":"default","workdir":"` + dir + `",
			"state":"Complete","message":"every step completed","started":"` + start.Format(time.RFC3339) + `","finished":"` + end.Format(time.RFC3339) + `",
			"steps":[{"name":"node-0","command":["torchrun"],"log":"` + localrun.LogPath(dir, "node-0") + `","pid":7,"started":"` + start.Format(time.RFC3339) + `","finished":"` + end.Format(time.RFC3339) + `","exitCode":0}],
			"trainerStatus":{"progressPercentage":100,"metrics":[{"name":"loss","value":"0.1"}]},"reports":3}`
		gomega.Expect(os.WriteFile(filepath.Join(dir, localrun.RecordFile), []byte(rec), 0o644)).To(gomega.Succeed())

		r := gantry("get", "--local", "ddp", "--workdir", dir)
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(r.Stdout).To(gomega.ContainSubstring("State:      Complete (every step completed)\n"))
		gomega.Expect(r.Stdout).To(gomega.ContainSubstring("Progress:   100% loss=0.1 (3 reports)\n"))
		gomega.Expect(r.Stdout).To(gomega.MatchRegexp(`node-0\s+7\s+0\s+14s\s+`))

		r = gantry("logs", "--local", "ddp", "--workdir", dir, "--tail", "2")
		gomega.Expect(r.Code).To(gomega.Equal(0), r.Stderr)
		gomega.Expect(r.Stdout).To(gomega.Equal("two\nthree\n"))

		r = gantry("logs", "--local", "ddp", "--workdir", dir, "--step", "node-3")
		gomega.Expect(r.Code).To(gomega.Equal(4))
		gomega.Expect(r.Stderr).To(gomega.Equal("error: the local run of \"ddp\" has no step \"node-3\"; its steps: node-0\n"))

		r = gantry("get", "--local", "other", "--workdir", filepath.Join(dir, "absent"))
		gomega.Expect(r.Code).To(gomega.Equal(4))
		gomega.Expect(r.Stderr).To(gomega.ContainSubstring(`no local run of "other" in `))
	})
})
