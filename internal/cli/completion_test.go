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
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestComplete: names complete from the cluster, as the shells ask through cobra's __complete
// (the last line is cobra's directive: 4 no file completion, 1 an error).
func TestComplete(t *testing.T) {
	cluster := fixture{
		objs: []client.Object{torchRuntime(), utiltesting.MakeClusterTrainingRuntimeWrapper("internal").Obj(), bert(), completeJob("done"),
			&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}}, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "team-a"}}},
		pods: []*corev1.Pod{bertPod(0), bertPod(1)},
	}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    string
	}{
		"job names": {
			args: []string{"get", ""},
			want: "bert\ndone\n:4\n",
		},
		"job names by prefix": {
			args: []string{"logs", "b"},
			want: "bert\n:4\n",
		},
		"one name only": {
			args: []string{"wait", "bert", ""},
			want: ":4\n",
		},
		"the job's steps": {
			args: []string{"logs", "bert", "--step", ""},
			want: "node-0\nnode-1\n:4\n",
		},
		"runtimes with a framework": {
			args: []string{"train", "--runtime", ""},
			want: "torch-distributed\n:4\n",
		},
		"runtime names of runtimes get": {
			args: []string{"runtimes", "get", "t"},
			want: "torch-distributed\n:4\n",
		},
		"states": {
			args: []string{"list", "--state", ""},
			want: "Queued\nSuspended\nCreated\nRunning\nRestarting\nComplete\nFailed\n:4\n",
		},
		"namespaces": {
			args: []string{"list", "-n", "t"},
			want: "team-a\n:4\n",
		},
		"the cluster unreachable": {
			cluster: fixture{unreachable: true},
			args:    []string{"get", ""},
			want:    ":1\n",
		},
		"subcommands": {
			args: []string{"runtimes", "un"},
			want: "uninstall\tThe Helm chart's runtime installer: uninstall the shipped ClusterTrainingRuntimes\n:4\n",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil && !c.unreachable {
				c = cluster
			}
			got := c.run(t, append([]string{"__complete"}, tc.args...)...)
			checkResult(t, result{Stdout: tc.want}, result{Code: got.Code, Stdout: got.Stdout})
		})
	}
}

// TestCompletionScripts: gantry completion SHELL prints the shell's script.
func TestCompletionScripts(t *testing.T) {
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantPrefix string
	}{
		"bash":          {args: []string{"completion", "bash"}, wantPrefix: "# bash completion V2 for gantry"},
		"zsh":           {args: []string{"completion", "zsh"}, wantPrefix: "#compdef gantry"},
		"fish":          {args: []string{"completion", "fish"}, wantPrefix: "# fish completion for gantry"},
		"powershell":    {args: []string{"completion", "powershell"}, wantPrefix: "# powershell completion for gantry"},
		"another shell": {args: []string{"completion", "tcsh"}, wantCode: ExitUsage},
		"no shell":      {args: []string{"completion"}, wantCode: ExitUsage},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got := fixture{}.run(t, tc.args...)
			if got.Code != tc.wantCode || !strings.HasPrefix(got.Stdout, tc.wantPrefix) {
				t.Errorf("exit code %d (want %d), stdout %.80q, want it to start with %q; stderr %q", got.Code, tc.wantCode, got.Stdout, tc.wantPrefix, got.Stderr)
			}
		})
	}
}
