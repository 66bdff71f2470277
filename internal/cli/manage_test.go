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

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// patchRefused answers a patch as the API server does while an admission webhook is down.
func patchRefused(context.Context, client.WithWatch, client.Object, client.Patch, ...client.PatchOption) error {
	return apierrors.NewInternalError(errors.New(`failed calling webhook "vtrainjob.gantry.dev": connection refused`))
}

func TestDeleteSuspendResume(t *testing.T) {
	queued := utiltesting.MakeTrainJobWrapper("default", "queued").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).Suspend(true).Label("kueue.x-k8s.io/queue-name", "team-a").Obj()
	queued.UID = "0f1e"
	paused := utiltesting.MakeTrainJobWrapper("default", "paused").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).Suspend(true).Obj()
	cluster := func() fixture {
		return fixture{objs: []client.Object{torchRuntime(), bert(), completeJob("done"),
			failedTrainJob("bad"), queued.DeepCopy(), paused.DeepCopy()}}
	}
	withPod := cluster()
	withPod.pods = []*corev1.Pod{bertPod(0)}
	down := cluster()
	down.funcs = interceptor.Funcs{Patch: patchRefused}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"delete": {
			args: []string{"delete", "bert"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bert deleted\n"},
		},
		"delete --wait: nothing is left": {
			args: []string{"delete", "bert", "--wait"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bert deleted\n"},
		},
		"delete --wait: a pod stays past the timeout": {
			cluster: withPod,
			args:    []string{"delete", "bert", "--wait", "--timeout", "1ms"},
			want:    failed(ExitTimeout, "timed out after 1ms waiting for TrainJob bert to be deleted (left: 1 pods)"),
		},
		"delete: not found": {
			args: []string{"delete", "nope"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "default"`),
		},
		"delete: a bad --timeout": {
			args: []string{"delete", "bert", "--wait", "--timeout", "soon"},
			want: usage(`invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"`),
		},
		"suspend": {
			args: []string{"suspend", "bert"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bert suspended\n"},
		},
		"resume": {
			args: []string{"resume", "paused"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/paused resumed\n"},
		},
		"suspend: a finished job": {
			args: []string{"suspend", "done"},
			want: usage("TrainJob done is Complete: a finished job cannot be suspended"),
		},
		"resume: a failed job": {
			args: []string{"resume", "bad"},
			want: usage("TrainJob bad is Failed: a finished job cannot be resumed"),
		},
		"suspend: Kueue decides": {
			args: []string{"suspend", "queued"},
			want: usage("TrainJob queued is managed by Kueue (queue \"team-a\"), which decides when it runs: use `kubectl kueue stop workload` on its Workload (kubectl get workloads -n default -l kueue.x-k8s.io/job-uid=0f1e) instead"),
		},
		"resume: Kueue decides": {
			args: []string{"resume", "queued"},
			want: usage("TrainJob queued is managed by Kueue (queue \"team-a\"), which decides when it runs: use `kubectl kueue resume workload` on its Workload (kubectl get workloads -n default -l kueue.x-k8s.io/job-uid=0f1e) instead"),
		},
		"suspend: not found": {
			args: []string{"suspend", "nope", "-n", "team-b"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "team-b"`),
		},
		"suspend: a webhook down is 7, not 1": {
			cluster: down,
			args:    []string{"suspend", "bert"},
			want:    failed(ExitOther, `Internal error occurred: failed calling webhook "vtrainjob.gantry.dev": connection refused`),
		},
		"resume: no name": {
			args: []string{"resume"},
			want: usage("give the TrainJob's name"),
		},
		"delete: two names": {
			args: []string{"delete", "a", "b"},
			want: usage("give one TrainJob name, got 2 arguments: a b"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil {
				c = cluster()
			}
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}
