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
	"testing"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestWait(t *testing.T) {
	objs := func() []client.Object {
		return []client.Object{torchRuntime(), bert(), completeJob("done"), failedTrainJob("bad")}
	}
	// watching feeds the watch of bert one change.
	watching := func(ev watch.Event) fixture {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		return fixture{objs: objs(), ctx: ctx, funcs: interceptor.Funcs{Watch: watchOf(cancel, ev)}}
	}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"Complete already": {
			args: []string{"wait", "done"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/done is Complete\n"},
		},
		"a completed job has been Running": {
			args: []string{"wait", "done", "--for", "running"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/done is Complete\n"},
		},
		"a condition": {
			args: []string{"wait", "done", "--for", "condition=Complete"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/done is condition Complete=True\n"},
		},
		"a failed job waited for as Failed": {
			args: []string{"wait", "bad", "--for", "Failed"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bad is Failed\n"},
		},
		"the job failed: 1": {
			args: []string{"wait", "bad"},
			want: failed(ExitJobFailed, "TrainJob bad failed: jobset failed: node-0 reached its backoff limit"),
		},
		"a failed job never meets a condition: 1": {
			args: []string{"wait", "bad", "--for", "condition=Suspended"},
			want: failed(ExitJobFailed, "TrainJob bad failed: jobset failed: node-0 reached its backoff limit"),
		},
		"a completed job that can never be Suspended: 7": {
			args: []string{"wait", "done", "--for", "Suspended"},
			want: failed(ExitOther, "TrainJob done is Complete and will never be Suspended"),
		},
		"the watch sees the job complete": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: completeJob("bert")}),
			args:    []string{"wait", "bert", "--timeout", "0"},
			want:    result{Stdout: "trainjob.trainer.kubeflow.org/bert is Complete\n"},
		},
		"the watch sees the job fail": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: failedTrainJob("bert")}),
			args:    []string{"wait", "bert", "--for", "condition=Complete"},
			want:    failed(ExitJobFailed, "TrainJob bert failed: jobset failed: node-0 reached its backoff limit"),
		},
		"deleted while waiting: 4": {
			cluster: watching(watch.Event{Type: watch.Deleted, Object: bert()}),
			args:    []string{"wait", "bert"},
			want:    failed(ExitNotFound, "TrainJob bert was deleted while waiting for it to be Complete"),
		},
		"timeout: 3, with the state it is in": {
			args: []string{"wait", "bert", "--timeout", "1ms"},
			want: failed(ExitTimeout, "timed out after 1ms waiting for TrainJob bert to be Complete (it is Running)"),
		},
		"not found: 4": {
			args: []string{"wait", "nope"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "default"`),
		},
		"an unknown state": {
			args: []string{"wait", "bert", "--for", "Done"},
			want: usage(`--for: unknown state "Done": want one of Queued, Suspended, Created, Running, Restarting, Complete, Failed (or condition=TYPE)`),
		},
		"a condition without its type": {
			args: []string{"wait", "bert", "--for", "condition="},
			want: usage("--for condition= needs a condition type, e.g. condition=Complete"),
		},
		"a bad --timeout": {
			args: []string{"wait", "bert", "--timeout", "soon"},
			want: usage(`invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"`),
		},
		"no name": {
			args: []string{"wait", "--for", "Running"},
			want: usage("give the TrainJob's name"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil {
				c = fixture{objs: objs()}
			}
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}
