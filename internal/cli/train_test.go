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
	"context"
	"errors"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

const trainJobYAML = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata:
  name: from-file
spec:
  runtimeRef:
    name: torch-distributed
`

// refuseCreate answers a create as the API server does when admission refuses it, or err.
func refuseCreate(err error) interceptor.Funcs {
	return interceptor.Funcs{Create: func(context.Context, client.WithWatch, client.Object, ...client.CreateOption) error { return err }}
}

func TestTrain(t *testing.T) {
	file := writeFile(t, "job.yaml", trainJobYAML)
	noJob := writeFile(t, "runtime.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n")
	twoJobs := writeFile(t, "two.yaml", trainJobYAML+"---\n"+strings.Replace(trainJobYAML, "from-file", "second", 1))
	oldAPI := writeFile(t, "v1.yaml", strings.Replace(trainJobYAML, "v1alpha1", "v1", 1))
	teamB := writeFile(t, "team-b.yaml", strings.Replace(trainJobYAML, "name: from-file", "name: from-file\n  namespace: team-b", 1))
	cluster := func() fixture { return fixture{objs: []client.Object{torchRuntime()}} }
	// watching creates the job, then feeds the wait's watch the job as it ends.
	watching := func(ev watch.Event) fixture {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		f := cluster()
		f.ctx, f.funcs = ctx, interceptor.Funcs{Watch: watchOf(cancel, ev)}
		return f
	}
	gk := schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "TrainJob"}
	cases := map[string]struct {
		cluster fixture
		args    []string
		stdin   string
		want    result
	}{
		"from a file": {
			args: []string{"train", "-f", file},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/from-file created\n"},
		},
		"from standard input, renamed": {
			args:  []string{"train", "-f", "-", "--name", "renamed"},
			stdin: trainJobYAML,
			want:  result{Stdout: "trainjob.trainer.kubeflow.org/renamed created\n"},
		},
		"from flags: the runtime's kind, the trainer and the queue": {
			args: []string{"train", "--runtime", "torch-distributed", "--name", "flags", "--image", "pytorch:2", "--nodes", "3",
				"--gpus-per-node", "2", "--env", "EPOCHS=3", "--queue", "team-a", "-o", "jsonpath={.spec.runtimeRef.kind} {.spec.trainer} {.metadata.labels}",
				"--", "python", "train.py"},
			want: result{Stdout: `ClusterTrainingRuntime {"command":["python","train.py"],"env":[{"name":"EPOCHS","value":"3"}],"image":"pytorch:2","numNodes":3,"resourcesPerNode":{"limits":{"nvidia.com/gpu":"2"}}} {"kueue.x-k8s.io/queue-name":"team-a"}`},
		},
		"--generate-name": {
			args: []string{"train", "-f", file, "--generate-name", "exp-", "-o", "jsonpath={.metadata.generateName}"},
			want: result{Stdout: "exp-"},
		},
		"--dry-run=server": {
			args: []string{"train", "-f", file, "--dry-run=server"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/from-file created (server dry run)\n"},
		},
		"--wait: the job completes": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: completeJob("from-file")}),
			args:    []string{"train", "-f", file, "--wait"},
			want:    result{Stdout: "trainjob.trainer.kubeflow.org/from-file created\n"},
		},
		"--wait: the job fails: 1": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: failedTrainJob("from-file")}),
			args:    []string{"train", "-f", file, "--wait", "--timeout", "1h"},
			want: result{Code: ExitJobFailed, Stdout: "trainjob.trainer.kubeflow.org/from-file created\n",
				Stderr: "error: TrainJob from-file failed: jobset failed: node-0 reached its backoff limit\n"},
		},
		"admission refuses: 2": {
			cluster: fixture{funcs: refuseCreate(apierrors.NewInvalid(gk, "from-file", field.ErrorList{field.Invalid(field.NewPath("spec", "trainer", "numNodes"), 0, "must be at least 1")}))},
			args:    []string{"train", "-f", file},
			want:    usage(`creating TrainJob from-file: TrainJob.trainer.kubeflow.org "from-file" is invalid: spec.trainer.numNodes: Invalid value: 0: must be at least 1`),
		},
		"a webhook down: 7": {
			cluster: fixture{funcs: refuseCreate(apierrors.NewInternalError(errors.New("failed calling webhook")))},
			args:    []string{"train", "-f", file, "--generate-name", "exp-"},
			want:    failed(ExitOther, "creating TrainJob exp-*: Internal error occurred: failed calling webhook"),
		},
		"a runtime the cluster lacks: 4": {
			args: []string{"train", "--runtime", "nope"},
			want: failed(ExitNotFound, `runtime "nope" not found: no TrainingRuntime in namespace "default" and no ClusterTrainingRuntime`),
		},
		"neither a file nor a runtime": {
			args: []string{"train"},
			want: usage("give -f FILE or --runtime NAME"),
		},
		"a file and job flags": {
			args: []string{"train", "-f", file, "--image", "x"},
			want: usage("give -f FILE or the job flags (--runtime, --image, --nodes, --gpus-per-node, --env, -- COMMAND), not both"),
		},
		"--name and --generate-name": {
			args: []string{"train", "-f", file, "--name", "a", "--generate-name", "b-"},
			want: usage("give --name or --generate-name, not both"),
		},
		"negative --nodes": {
			args: []string{"train", "--runtime", "r", "--nodes", "-1"},
			want: usage("--nodes must be at least 1, got -1"),
		},
		"negative --gpus-per-node": {
			args: []string{"train", "--runtime", "r", "--gpus-per-node", "-2"},
			want: usage("--gpus-per-node must not be negative, got -2"),
		},
		"--nodes not a number": {
			args: []string{"train", "--runtime", "r", "--nodes", "two"},
			want: usage(`invalid argument "two" for "--nodes" flag: strconv.ParseInt: parsing "two": invalid syntax`),
		},
		"an unknown --dry-run": {
			args: []string{"train", "-f", file, "--dry-run=maybe"},
			want: usage(`--dry-run must be "none", "client" or "server", got "maybe"`),
		},
		"--dry-run with --wait": {
			args: []string{"train", "-f", file, "--dry-run", "--wait"},
			want: usage("--wait and --follow need a TrainJob that runs: leave out --dry-run"),
		},
		"--wait and --follow": {
			args: []string{"train", "-f", file, "--wait", "--follow"},
			want: usage("give --wait or --follow, not both (--follow waits too)"),
		},
		"an --env without =": {
			args: []string{"train", "--runtime", "r", "--env", "EPOCHS"},
			want: usage(`--env "EPOCHS": want NAME=VALUE`),
		},
		"a command without --": {
			args: []string{"train", "--runtime", "r", "python"},
			want: usage("put the training command after --, e.g. gantry train --runtime R -- python train.py"),
		},
		"a missing file": {
			args: []string{"train", "-f", "/nonexistent/job.yaml"},
			want: usage("reading /nonexistent/job.yaml: open /nonexistent/job.yaml: no such file or directory"),
		},
		"a file without a TrainJob": {
			args: []string{"train", "-f", noJob},
			want: usage(noJob + " holds no TrainJob (kind: TrainJob, apiVersion: trainer.kubeflow.org/v1alpha1)"),
		},
		"a file with two TrainJobs": {
			args: []string{"train", "-f", twoJobs},
			want: usage(twoJobs + " holds more than one TrainJob; give one per train"),
		},
		"another apiVersion": {
			args: []string{"train", "-f", oldAPI},
			want: usage(oldAPI + `: TrainJob has apiVersion "trainer.kubeflow.org/v1", want trainer.kubeflow.org/v1alpha1`),
		},
		"the file's namespace is not -n's": {
			args: []string{"train", "-f", teamB, "-n", "default"},
			want: usage(`the TrainJob's namespace "team-b" differs from -n default`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil && c.funcs.Create == nil {
				c = cluster()
			}
			c.stdin = tc.stdin
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}

// TestTrainDryRunClient: --dry-run=client renders with the cluster's runtime, else the shipped
// one, and says which.
func TestTrainDryRunClient(t *testing.T) {
	file := writeFile(t, "job.yaml", trainJobYAML)
	cases := map[string]struct {
		cluster       fixture
		args          []string
		wantCode      int
		wantStdoutHas []string
		wantStderr    string
	}{
		"the cluster's runtime": {
			cluster:       fixture{objs: []client.Object{torchRuntime()}},
			args:          []string{"train", "-f", file, "--dry-run=client"},
			wantStdoutHas: []string{"kind: ConfigMap\n", "name: from-file-runtime-snapshot\n", "kind: JobSet\n", "image: node:test\n"},
		},
		"the shipped runtime, when the cluster lacks it": {
			cluster:       fixture{},
			args:          []string{"train", "-f", file, "--dry-run"},
			wantStdoutHas: []string{"kind: JobSet\n", "image: pytorch/pytorch:"},
			wantStderr:    "warning: using the ClusterTrainingRuntime \"torch-distributed\" Gantry ships: it is not on the cluster\n",
		},
		"flags, the cluster unreachable": {
			cluster:       fixture{unreachable: true},
			args:          []string{"train", "--runtime", "torch-distributed", "--name", "flags", "--dry-run=client", "--", "python", "train.py"},
			wantStdoutHas: []string{"name: flags\n", "- python\n", "- train.py\n"},
			wantStderr:    "warning: using the ClusterTrainingRuntime \"torch-distributed\" Gantry ships: the cluster could not be asked (Get \"https://127.0.0.1:1/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes/torch-distributed\": dial tcp 127.0.0.1:1: connect: connection refused)\n",
		},
		"a runtime nowhere to be found: 4": {
			cluster:    fixture{unreachable: true},
			args:       []string{"train", "--runtime", "nope", "--dry-run=client"},
			wantCode:   ExitNotFound,
			wantStderr: "error: ClusterTrainingRuntime \"nope\" not found in the files, on the cluster or among the runtimes Gantry ships\n",
		},
		"a job the cluster would refuse: 2": {
			cluster:    fixture{objs: []client.Object{torchRuntime()}},
			args:       []string{"train", "--runtime", "torch-distributed", "--name", "1bad", "--dry-run=client"},
			wantCode:   ExitUsage,
			wantStderr: "error: the cluster would refuse this TrainJob:\n  Invalid value: metadata.name must match RFC 1035 DNS label format\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := tc.cluster.run(t, tc.args...)
			if got.Code != tc.wantCode || got.Stderr != tc.wantStderr {
				t.Errorf("exit code %d (want %d), stderr (-want,+got):\n%s", got.Code, tc.wantCode, diffText(tc.wantStderr, got.Stderr))
			}
			for _, s := range tc.wantStdoutHas {
				if !strings.Contains(got.Stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, got.Stdout)
				}
			}
		})
	}
}
