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
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// listCluster holds three jobs in "default", one in "team-b", and bert's JobSet restarted twice.
func listCluster() fixture {
	bert := bert()
	bert.Labels = map[string]string{"team": "nlp"}
	bert.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](45), EstimatedRemainingSeconds: ptr.To[int32](754)}
	js := &jobset.JobSet{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "bert"}, Status: jobset.JobSetStatus{Restarts: 2}}
	return fixture{objs: []client.Object{torchRuntime(), bert, completeJob("done"), failedTrainJob("bad"),
		utiltesting.MakeTrainJobWrapper("team-b", "other").Created(testCreated).Suspend(true).Obj(), js}}
}

func TestList(t *testing.T) {
	forbidden := interceptor.Funcs{List: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}, "", errors.New("no RBAC"))
	}}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"a table of the namespace's jobs, by name": {
			args: []string{"list"},
			want: result{Stdout: `NAME   STATE      RUNTIME             NODES   GPUS   PROGRESS   ETA      AGE
bad    Failed     torch-distributed   2       4      -          -        90m
bert   Running    torch-distributed   2       4      45%        12m34s   90m
done   Complete   torch-distributed   2       4      -          -        90m
`},
		},
		"the alias ls, -n": {
			args: []string{"ls", "-n", "team-b"},
			want: result{Stdout: `NAME    STATE       RUNTIME             NODES   GPUS   PROGRESS   ETA   AGE
other   Suspended   torch-distributed   2       4      -          -     90m
`},
		},
		"-A: every namespace": {
			args: []string{"list", "-A", "--state", "Suspended,Failed"},
			want: result{Stdout: `NAMESPACE   NAME    STATE       RUNTIME             NODES   GPUS   PROGRESS   ETA   AGE
default     bad     Failed      torch-distributed   2       4      -          -     90m
team-b      other   Suspended   torch-distributed   2       4      -          -     90m
`},
		},
		"-o wide: queue, restarts (the JobSet's) and message": {
			args: []string{"list", "-o", "wide", "--no-headers"},
			want: result{Stdout: `bad    Failed     torch-distributed   2   4   -     -        90m   -   0   jobset failed: node-0 reached its backoff limit
bert   Running    torch-distributed   2   4   45%   12m34s   90m   -   2   -
done   Complete   torch-distributed   2   4   -     -        90m   -   0   jobset completed successfully
`},
		},
		"-o name, by label": {
			args: []string{"list", "-o", "name", "-l", "team=nlp"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bert\n"},
		},
		"-o jsonpath": {
			args: []string{"list", "-o", "jsonpath={range .items[*]}{.name}={.state} {end}"},
			want: result{Stdout: "bad=Failed bert=Running done=Complete "},
		},
		"--state, case-insensitive": {
			args: []string{"list", "--state", "complete", "--no-headers"},
			want: result{Stdout: "done   Complete   torch-distributed   2   4   -   -   90m\n"},
		},
		"nothing found is said on standard error": {
			args: []string{"list", "--runtime", "mpi-distributed"},
			want: result{Stdout: "NAME   STATE   RUNTIME   NODES   GPUS   PROGRESS   ETA   AGE\n", Stderr: "No TrainJobs found in namespace default.\n"},
		},
		"nothing found in any namespace": {
			args: []string{"list", "-A", "-l", "team=none", "--no-headers"},
			want: result{Stderr: "No TrainJobs found.\n"},
		},
		"an unknown state": {
			args: []string{"list", "--state", "Done"},
			want: usage(`--state: unknown state "Done": want one of Queued, Suspended, Created, Running, Restarting, Complete, Failed`),
		},
		"a bad selector": {
			args: []string{"list", "-l", "a b"},
			want: usage(`--selector "a b": unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt`),
		},
		"--watch prints tables only": {
			args: []string{"list", "-w", "-o", "yaml"},
			want: usage("--watch prints tables only; leave out -o yaml"),
		},
		"an unknown output format": {
			args: []string{"list", "-o", "csv"},
			want: usage(`unable to match a printer suitable for the output format "csv", allowed formats are: go-template,go-template-file,json,jsonpath,jsonpath-as-json,jsonpath-file,kyaml,name,template,templatefile,yaml`),
		},
		"an argument": {
			args: []string{"list", "bert"},
			want: usage(`unknown command "bert" for "gantry list"`),
		},
		"an unknown flag": {
			args: []string{"list", "--force"},
			want: usage("unknown flag: --force"),
		},
		"forbidden: 5": {
			cluster: fixture{funcs: forbidden},
			args:    []string{"list"},
			want:    failed(ExitForbidden, "trainjobs.trainer.kubeflow.org is forbidden: no RBAC"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cluster := tc.cluster
			if cluster.objs == nil && cluster.funcs.List == nil {
				cluster = listCluster()
			}
			checkResult(t, tc.want, cluster.run(t, tc.args...))
		})
	}
}
