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
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

func TestEvents(t *testing.T) {
	objs := []client.Object{torchRuntime(), bert(),
		event("Pod", "bert-node-0-0-abcde", "Started", "Started container node", 88*time.Minute),
		event("TrainJob", "bert", "Created", "created JobSet bert", 89*time.Minute),
		event("Job", "bert-node-0", "SuccessfulCreate", "Created pod: bert-node-0-0-abcde", 88*time.Minute+30*time.Second),
		event("Pod", "bertha-node-0-0-abcde", "Started", "another job's pod", 88*time.Minute),
		event("ConfigMap", "bert", "Updated", "not a kind of the job's story", 88*time.Minute),
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	watched := fixture{objs: objs, ctx: ctx, funcs: interceptor.Funcs{Watch: watchOf(cancel,
		watch.Event{Type: watch.Added, Object: event("Pod", "bert-node-0-0-abcde", "Killing", "Stopping container node", 0)},
		watch.Event{Type: watch.Added, Object: event("Pod", "bertha-node-0-0-abcde", "Killing", "another job's pod", 0)},
		watch.Event{Type: watch.Deleted, Object: event("TrainJob", "bert", "Created", "created JobSet bert", 89*time.Minute)},
	)}}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"the job's events and its children's, oldest first": {
			args: []string{"events", "bert"},
			want: result{Stdout: `AGE   TYPE     REASON             OBJECT                    MESSAGE
89m   Normal   Created            trainjob/bert             created JobSet bert
88m   Normal   SuccessfulCreate   job/bert-node-0           Created pod: bert-node-0-0-abcde
88m   Normal   Started            pod/bert-node-0-0-abcde   Started container node
`},
		},
		"--no-headers": {
			args: []string{"events", "bert", "--no-headers"},
			want: result{Stdout: `89m   Normal   Created            trainjob/bert             created JobSet bert
88m   Normal   SuccessfulCreate   job/bert-node-0           Created pod: bert-node-0-0-abcde
88m   Normal   Started            pod/bert-node-0-0-abcde   Started container node
`},
		},
		"-o yaml: a versioned list": {
			args: []string{"events", "bert", "-o", "yaml"},
			want: result{Stdout: `apiVersion: gantry.dev/v1
items:
- kind: TrainJob
  message: created JobSet bert
  object: bert
  reason: Created
  time: "2026-01-01T10:31:00Z"
  type: Normal
- kind: Job
  message: 'Created pod: bert-node-0-0-abcde'
  object: bert-node-0
  reason: SuccessfulCreate
  time: "2026-01-01T10:31:30Z"
  type: Normal
- kind: Pod
  message: Started container node
  object: bert-node-0-0-abcde
  reason: Started
  time: "2026-01-01T10:32:00Z"
  type: Normal
kind: TrainJobEventList
`},
		},
		"--watch prints the new events of the job until stopped": {
			cluster: watched,
			args:    []string{"events", "bert", "--watch"},
			want: result{Stdout: `AGE   TYPE     REASON             OBJECT                    MESSAGE
89m   Normal   Created            trainjob/bert             created JobSet bert
88m   Normal   SuccessfulCreate   job/bert-node-0           Created pod: bert-node-0-0-abcde
88m   Normal   Started            pod/bert-node-0-0-abcde   Started container node
0s   Normal   Killing   pod/bert-node-0-0-abcde   Stopping container node
`},
		},
		"--watch prints tables only": {
			args: []string{"events", "bert", "-w", "-o", "json"},
			want: usage("--watch prints tables only; leave out -o json"),
		},
		"not found: 4": {
			args: []string{"events", "nope"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "default"`),
		},
		"no name": {
			args: []string{"events"},
			want: usage("give the TrainJob's name"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			cluster := tc.cluster
			if cluster.objs == nil {
				cluster = fixture{objs: objs}
			}
			checkResult(t, tc.want, cluster.run(t, tc.args...))
		})
	}
}
