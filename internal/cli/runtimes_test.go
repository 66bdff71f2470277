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
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestRuntimesListGet(t *testing.T) {
	mpi := utiltesting.MakeTrainingRuntimeWrapper("default", "mpi-small").Label(trainer.FrameworkLabel, "mpi").
		Label(trainer.SupportLabel, trainer.SupportDeprecated).Obj()
	mpi.CreationTimestamp = metav1.NewTime(testCreated)
	other := utiltesting.MakeTrainingRuntimeWrapper("team-b", "jax-b").Label(trainer.FrameworkLabel, "jax").Obj()
	other.CreationTimestamp = metav1.NewTime(testCreated)
	noFramework := utiltesting.MakeClusterTrainingRuntimeWrapper("internal").Obj()
	cluster := fixture{objs: []client.Object{torchRuntime(), mpi, other, noFramework}}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"list: the namespace's and the cluster's, with a framework": {
			args: []string{"runtimes", "list"},
			want: result{Stdout: `NAME                KIND                     FRAMEWORK   NODES   DEVICE              IMAGE       DEPRECATED
mpi-small           TrainingRuntime          mpi         1       cpu                 node:test   true
torch-distributed   ClusterTrainingRuntime   torch       2       nvidia.com/gpu: 4   node:test   false
`},
		},
		"list -A -o wide": {
			args: []string{"runtime", "ls", "-A", "-o", "wide"},
			want: result{Stdout: `NAMESPACE   NAME                KIND                     FRAMEWORK   NODES   DEVICE              IMAGE       DEPRECATED   AGE
default     mpi-small           TrainingRuntime          mpi         1       cpu                 node:test   true         90m
team-b      jax-b               TrainingRuntime          jax         1       cpu                 node:test   false        90m
-           torch-distributed   ClusterTrainingRuntime   torch       2       nvidia.com/gpu: 4   node:test   false        90m
`},
		},
		"list -o name": {
			args: []string{"runtimes", "list", "-o", "name"},
			want: result{Stdout: "trainingruntime.trainer.kubeflow.org/mpi-small\nclustertrainingruntime.trainer.kubeflow.org/torch-distributed\n"},
		},
		"list: none": {
			cluster: fixture{objs: []client.Object{noFramework}},
			args:    []string{"runtimes", "list", "--no-headers"},
			want:    result{Stderr: "No runtimes found.\n"},
		},
		"get: the namespace's first": {
			args: []string{"runtimes", "get", "mpi-small"},
			want: result{Stdout: `NAME        KIND              FRAMEWORK   NODES   DEVICE   IMAGE       DEPRECATED
mpi-small   TrainingRuntime   mpi         1       cpu      node:test   true
`},
		},
		"get: else the cluster's": {
			args: []string{"runtimes", "get", "torch-distributed", "--no-headers"},
			want: result{Stdout: "torch-distributed   ClusterTrainingRuntime   torch   2   nvidia.com/gpu: 4   node:test   false\n"},
		},
		"get -o jsonpath: the runtime object itself": {
			args: []string{"runtimes", "get", "torch-distributed", "-o", "jsonpath={.kind} {.spec.mlPolicy.numNodes} {.metadata.labels}"},
			want: result{Stdout: `ClusterTrainingRuntime 2 {"trainer.kubeflow.org/framework":"torch"}`},
		},
		"get -o name": {
			args: []string{"runtimes", "get", "mpi-small", "-o", "name"},
			want: result{Stdout: "trainingruntime.trainer.kubeflow.org/mpi-small\n"},
		},
		"get: not found: 4": {
			args: []string{"runtimes", "get", "jax-b"},
			want: failed(ExitNotFound, `runtime "jax-b" not found: no TrainingRuntime in namespace "default" and no ClusterTrainingRuntime`),
		},
		"get: no name": {
			args: []string{"runtimes", "get"},
			want: usage("give the runtime's name"),
		},
		"no subcommand": {
			args: []string{"runtimes"},
			want: usage("give a subcommand: get, install, list, uninstall"),
		},
		"an unknown subcommand": {
			args: []string{"runtimes", "apply"},
			want: usage(`unknown command "apply" for "gantry runtimes"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil {
				c = cluster
			}
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}
