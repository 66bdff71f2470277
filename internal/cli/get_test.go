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
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// getCluster holds bert, running on two pods with progress and events, and a queued job.
func getCluster() fixture {
	bert := bert()
	bert.Status.TrainerStatus = &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](45),
		EstimatedRemainingSeconds: ptr.To[int32](754), LastUpdatedTime: metav1.NewTime(testNow.Add(-time.Minute)),
		Metrics: []trainer.Metric{{Name: "loss", Value: "0.42"}}}
	objs := []client.Object{torchRuntime(), bert,
		event("TrainJob", "bert", "Created", "created JobSet bert", 89*time.Minute),
		event("Pod", "bert-node-0-0-abcde", "Started", "Started container node", 88*time.Minute),
		event("Pod", "other-node-0-0-abcde", "Started", "not bert's", 88*time.Minute),
	}
	// The long story of "chatty": 12 events, of which get shows the last 10.
	objs = append(objs, completeJob("chatty"))
	for i := range 12 {
		objs = append(objs, event("TrainJob", "chatty", fmt.Sprintf("Step%02d", i), "step", time.Duration(12-i)*time.Minute))
	}
	objs = append(objs, utiltesting.MakeTrainJobWrapper("default", "queued").RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Created(testCreated).Suspend(true).Label("kueue.x-k8s.io/queue-name", "team-a").Obj())
	return fixture{objs: objs, pods: []*corev1.Pod{bertPod(0), bertPod(1)}}
}

func TestGet(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"the state, steps, progress, conditions and events": {
			args: []string{"get", "bert"},
			want: result{Stdout: `Name:        bert
Namespace:   default
State:       Running
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Created:     2026-01-01T10:30:00Z (90m ago)
Progress:    45%, ETA 12m34s, updated 60s ago
  loss       0.42

Steps:
  STEP     POD                   PHASE     RESTARTS   NODE    DEVICES   STARTED
  node-0   bert-node-0-0-abcde   Running   0          gpu-1   4         89m ago
  node-1   bert-node-0-1-abcde   Running   0          gpu-1   4         89m ago

Conditions:
  <none>

Events:
  AGE   TYPE     REASON    OBJECT                    MESSAGE
  89m   Normal   Created   trainjob/bert             created JobSet bert
  88m   Normal   Started   pod/bert-node-0-0-abcde   Started container node
`},
		},
		"the last 10 events": {
			args: []string{"describe", "chatty"},
			want: result{Stdout: `Name:        chatty
Namespace:   default
State:       Complete
Message:     jobset completed successfully
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Created:     2026-01-01T10:30:00Z (90m ago)
Finished:    2026-01-01T11:30:00Z (30m ago)

Steps:
  <none>

Conditions:
  TYPE       STATUS   REASON      AGE   MESSAGE
  Complete   True     Completed   30m   jobset completed successfully

Events (last 10 of 12; gantry events chatty shows all):
  AGE   TYPE     REASON   OBJECT            MESSAGE
  10m   Normal   Step02   trainjob/chatty   step
  9m    Normal   Step03   trainjob/chatty   step
  8m    Normal   Step04   trainjob/chatty   step
  7m    Normal   Step05   trainjob/chatty   step
  6m    Normal   Step06   trainjob/chatty   step
  5m    Normal   Step07   trainjob/chatty   step
  4m    Normal   Step08   trainjob/chatty   step
  3m    Normal   Step09   trainjob/chatty   step
  2m    Normal   Step10   trainjob/chatty   step
  60s   Normal   Step11   trainjob/chatty   step
`},
		},
		"a queued job names its queue": {
			args: []string{"get", "queued"},
			want: result{Stdout: `Name:        queued
Namespace:   default
State:       Queued
Message:     waiting for Kueue to admit it to queue "team-a"
Runtime:     ClusterTrainingRuntime/torch-distributed (torch)
Nodes:       2 × 4 nvidia.com/gpu
Queue:       team-a
Created:     2026-01-01T10:30:00Z (90m ago)

Steps:
  <none>

Conditions:
  <none>

Events:
  <none>
`},
		},
		"-o jsonpath reads the view document": {
			args: []string{"get", "bert", "-o", "jsonpath={.apiVersion} {.kind} {.state} {.progress.percent} {.steps[*].name}"},
			want: result{Stdout: "gantry.dev/v1 TrainJobView Running 45 node-0 node-1"},
		},
		"-o name": {
			args: []string{"get", "bert", "-o", "name"},
			want: result{Stdout: "trainjob.trainer.kubeflow.org/bert\n"},
		},
		"not found: 4": {
			args: []string{"get", "nope", "-n", "team-b"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "team-b"`),
		},
		"no name": {
			args: []string{"get"},
			want: usage("give the TrainJob's name"),
		},
		"two names": {
			args: []string{"get", "a", "b"},
			want: usage("give one TrainJob name, got 2 arguments: a b"),
		},
		"--local without a run": {
			args: []string{"get", "bert", "--local", "--workdir", "/nonexistent/bert"},
			want: failed(ExitNotFound, `no local run of "bert" in /nonexistent/bert: start one with gantry run --local, or give its --workdir`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, getCluster().run(t, tc.args...))
		})
	}
}
