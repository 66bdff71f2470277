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

package localrun

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/localrun"
	"github.com/gantry-ml/gantry/internal/manifest"
	"github.com/gantry-ml/gantry/test/util"
)

// parseArgs prints what torchrun's own argument parser reads from the environment.
const parseArgs = `
import json
from torch.distributed.run import get_args_parser
a = get_args_parser().parse_args(["train.py"])
print(json.dumps({"nnodes": a.nnodes, "rdzv_backend": a.rdzv_backend, "rdzv_endpoint": a.rdzv_endpoint,
                  "rdzv_id": a.rdzv_id, "max_restarts": a.max_restarts, "nproc_per_node": a.nproc_per_node}))
`

// TestElasticEnvReadByTorchrun: the elastic render's PET_* variables (the golden file, which
// TestGolden in internal/render keeps equal to the render) are names torchrun 1.13 reads, with
// the values meant. Training Operator v1 once shipped one it never read.
func TestElasticEnvReadByTorchrun(t *testing.T) {
	gantryBinary(t) // fails with how to install python3-torch when it is missing
	objs, err := manifest.ReadFile(filepath.Join(util.RepoRoot(), "internal", "render", "testdata", "golden", "torch-elastic.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=" + os.Getenv("PATH")}
	for _, o := range objs {
		if o.GetKind() != "JobSet" {
			continue
		}
		js := &jobset.JobSet{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, js); err != nil {
			t.Fatal(err)
		}
		for _, rj := range js.Spec.ReplicatedJobs {
			if rj.Name != "node" {
				continue
			}
			for _, e := range containerEnv(rj.Template.Spec.Template.Spec.Containers, "node") {
				if strings.HasPrefix(e.Name, "PET_") && e.ValueFrom == nil {
					env = append(env, e.Name+"="+e.Value)
				}
			}
		}
	}
	cmd := exec.Command("/usr/bin/python3", "-c", parseArgs)
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v\n%s", err, out)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	want := map[string]any{
		"nnodes": "1:4", "rdzv_backend": "c10d", "rdzv_endpoint": "torch-elastic-node-0-0.torch-elastic:29400",
		"rdzv_id": "0d3c5a52-7b8e-4a61-9f3d-1e2b4c6d8f90", "max_restarts": float64(3), "nproc_per_node": "auto",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("torchrun's arguments from the rendered env (-want +got):\n%s\nenv: %v", diff, env)
	}
}

func containerEnv(containers []corev1.Container, name string) []corev1.EnvVar {
	for _, c := range containers {
		if c.Name == name {
			return c.Env
		}
	}
	return nil
}

// TestElasticRunOutlivesANode (issue 20, test 7): an elastic TrainJob (min 1, max 2 nodes) runs
// under gantry run --local; node-1's whole process group (agent and worker) is killed at step
// 50; node-0's torchrun restarts its worker, which rendezvouses alone (world 1), resumes from
// the checkpoint and finishes: the run exits 0.
func TestElasticRunOutlivesANode(t *testing.T) {
	dir := jobDir(t)
	cmd, stdout, stderr := command(t, dir, nil, "run", "--local", "-f", "elastic.yaml", "--runtime-source", "shipped")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	runDir := filepath.Join(dir, ".gantry", "runs", "elastic")
	g := gomega.NewWithT(t)
	var pid int
	g.Eventually(func(g gomega.Gomega) {
		rec, err := localrun.ReadRecord(runDir)
		g.Expect(err).NotTo(gomega.HaveOccurred())
		log, err := os.ReadFile(localrun.LogPath(rec.Workdir, "node-1"))
		g.Expect(err).NotTo(gomega.HaveOccurred())
		g.Expect(string(log)).To(gomega.MatchRegexp(`rank \d step 50 `))
		pid = rec.Steps[slices.IndexFunc(rec.Steps, func(s localrun.StepRecord) bool { return s.Name == "node-1" })].Pid
	}, 90*time.Second, 100*time.Millisecond).Should(gomega.Succeed(), "node-1 never reached step 50:\n%s", stderr)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("gantry run --local: %v\nstdout:\n%s\nstderr:\n%s", err, stdout, stderr)
		}
	case <-time.After(3 * time.Minute):
		_ = cmd.Process.Kill()
		t.Fatalf("the run did not end within 3 minutes of the kill\nstderr:\n%s", stderr)
	}
	var out struct{ World, Restart, Start int }
	data, err := os.ReadFile(filepath.Join(dir, "elastic-out.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	if out.World != 1 || out.Restart < 1 || out.Start < 50 {
		t.Errorf("the last worker group: %+v; want world 1 after a restart, resumed at step 50 or later", out)
	}
	rec, err := localrun.ReadRecord(runDir)
	if err != nil {
		t.Fatal(err)
	}
	log, _ := os.ReadFile(localrun.LogPath(rec.Workdir, "node-0"))
	if !strings.Contains(string(log), "resumed from step") {
		t.Errorf("node-0's log does not show the resume:\n%s", log)
	}
	if rec.State != localrun.StateComplete || !strings.Contains(rec.Message, "node-1") {
		t.Errorf("run.json: %s %q; want Complete, naming node-1 as gone", rec.State, rec.Message)
	}
	expectNoProcessLeft(t, runDir)
}
