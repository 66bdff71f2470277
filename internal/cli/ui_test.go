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
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestUIFlags: gantry ui refuses bad flags before it reads the cluster or listens; serving is
// internal/ui's and test/browser's.
func TestUIFlags(t *testing.T) {
	cases := map[string]struct {
		args []string
		want result
	}{
		"an unknown --auth-mode": {
			args: []string{"ui", "--auth-mode", "magic"},
			want: usage(`--auth-mode must be "kubeconfig", "token" or "header", got "magic"`),
		},
		"an unknown --history": {
			args: []string{"ui", "--history", "disk"},
			want: usage(`--history must be "memory" or "configmap", got "disk"`),
		},
		"--max-client-connections 0": {
			args: []string{"ui", "--max-client-connections", "0"},
			want: usage("--max-client-connections must be at least 1, got 0"),
		},
		"--history-points 1": {
			args: []string{"ui", "--history-points", "1"},
			want: usage("--history-points must be at least 2, got 1"),
		},
		"--history-memory too small": {
			args: []string{"ui", "--history-memory", "1Ki"},
			want: usage("--history-memory must be at least 1Mi, got 1Ki"),
		},
		"kubeconfig mode listens on loopback only": {
			args: []string{"ui", "--address", "0.0.0.0:8080", "-n", "team-a"},
			want: usage(`--address "0.0.0.0:8080": kubeconfig mode serves your own identity, so it listens on loopback only (127.0.0.1)`),
		},
		"an address without a port": {
			args: []string{"ui", "--address", "localhost"},
			want: usage(`--address "localhost": address localhost: missing port in address`),
		},
		"--history-points not a number": {
			args: []string{"ui", "--history-points", "many"},
			want: usage(`invalid argument "many" for "--history-points" flag: strconv.ParseInt: parsing "many": invalid syntax`),
		},
		"an argument": {
			args: []string{"ui", "team-a"},
			want: usage(`unknown command "team-a" for "gantry ui"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, fixture{}.run(t, tc.args...))
		})
	}
}

// TestForwardedUIFlags: gantry ui hands gantry-ui the flags its user set, connection flags
// included, unless one is a flag gantry-ui lacks.
func TestForwardedUIFlags(t *testing.T) {
	cases := map[string]struct {
		args     []string
		wantArgs []string
		wantOK   bool
	}{
		"none": {wantOK: true},
		"the UI's and the connection's, -A and --cache-dir dropped": {
			args: []string{"--address", "127.0.0.1:8080", "--auth-mode=token", "-A", "--cache-dir", "/tmp/c", "--context", "prod",
				"--as-group", "a", "--as-group", "b", "--open"},
			wantArgs: []string{"--address=127.0.0.1:8080", "--as-group=a", "--as-group=b", "--auth-mode=token", "--context=prod", "--open=true"},
			wantOK:   true,
		},
		"a flag gantry-ui lacks": {
			args:     []string{"--as-user-extra", "k=v"},
			wantArgs: nil,
			wantOK:   false,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := NewOptions(&bytes.Buffer{}, &bytes.Buffer{}, &bytes.Buffer{})
			cmd, _, err := NewRootCommand(o).Find([]string{"ui"})
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			args, ok := forwardedUIFlags(cmd)
			if diff := cmp.Diff(tc.wantArgs, args); diff != "" || ok != tc.wantOK {
				t.Errorf("forwardedUIFlags() ok %t (want %t), args (-want,+got):\n%s", ok, tc.wantOK, diff)
			}
		})
	}
}
