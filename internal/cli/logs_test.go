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

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The fake clientset serves every pod's log as the one line "fake logs".
func TestLogs(t *testing.T) {
	cluster := fixture{objs: []client.Object{torchRuntime(), bert(), failedTrainJob("bad")},
		pods: []*corev1.Pod{bertPod(0), bertPod(1)}}
	cases := map[string]struct {
		args []string
		want result
	}{
		"rank 0 by default": {
			args: []string{"logs", "bert"},
			want: result{Stdout: "fake logs\n"},
		},
		"a step, prefixed": {
			args: []string{"logs", "bert", "--step", "node-1", "--prefix", "--tail", "5", "--since", "1h"},
			want: result{Stdout: "[node-1] fake logs\n"},
		},
		"every step": {
			args: []string{"logs", "bert", "--all"},
			want: result{Stdout: "[node-0] fake logs\n[node-1] fake logs\n"},
		},
		"a step the job lacks: 4": {
			args: []string{"logs", "bert", "--step", "launcher-0"},
			want: failed(ExitNotFound, `TrainJob bert: step "launcher-0" has no pod (steps: node-0, node-1)`),
		},
		"-f on a failed job ends with its result: 1": {
			args: []string{"logs", "bad", "-f", "--pod-timeout", "1ms"},
			want: result{Code: ExitJobFailed, Stderr: `warning: TrainJob bad: step "node-0" never ran: the TrainJob is Failed
error: TrainJob bad failed: jobset failed: node-0 reached its backoff limit
`},
		},
		"not found: 4": {
			args: []string{"logs", "nope"},
			want: failed(ExitNotFound, `TrainJob "nope" not found in namespace "default"`),
		},
		"--step and --all": {
			args: []string{"logs", "bert", "--all", "--step", "node-1"},
			want: usage("give --step or --all, not both"),
		},
		"a negative --tail": {
			args: []string{"logs", "bert", "--tail", "-5"},
			want: usage("--tail must be -1 (all) or a number of lines, got -5"),
		},
		"a negative --since": {
			args: []string{"logs", "bert", "--since", "-1m"},
			want: usage("--since must be a positive duration, got -1m0s"),
		},
		"a bad --pod-timeout": {
			args: []string{"logs", "bert", "--pod-timeout", "later"},
			want: usage(`invalid argument "later" for "--pod-timeout" flag: time: invalid duration "later"`),
		},
		"-f with --local": {
			args: []string{"logs", "bert", "--local", "-f"},
			want: usage("-f does not apply to --local: gantry run --local --follow prints the lines as they come"),
		},
		"no name": {
			args: []string{"logs"},
			want: usage("give the TrainJob's name"),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, cluster.run(t, tc.args...))
		})
	}
}
