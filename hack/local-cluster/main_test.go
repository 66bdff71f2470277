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

package main

import (
	"flag"
	"io"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParseInterspersed(t *testing.T) {
	cases := map[string]struct {
		args           []string
		wantPositional []string
		wantTail       int
		wantStateDir   string
	}{
		"flags first": {
			args:           []string{"--tail", "5", "gantry-manager"},
			wantPositional: []string{"gantry-manager"},
			wantTail:       5,
		},
		"flags after the name": {
			args:           []string{"gantry-manager", "--tail", "5", "--state-dir", "/s"},
			wantPositional: []string{"gantry-manager"},
			wantTail:       5,
			wantStateDir:   "/s",
		},
		"flags between names": {
			args:           []string{"etcd", "--tail=2", "kwok"},
			wantPositional: []string{"etcd", "kwok"},
			wantTail:       2,
		},
		"everything after -- is positional": {
			args:           []string{"etcd", "--", "--tail"},
			wantPositional: []string{"etcd", "--tail"},
		},
		"no arguments": {},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			fs := flag.NewFlagSet("logs", flag.ContinueOnError)
			fs.SetOutput(io.Discard)
			tail := fs.Int("tail", 0, "")
			stateDir := fs.String("state-dir", "", "")
			got, err := parseInterspersed(fs, tc.args)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantPositional, got); diff != "" {
				t.Errorf("positional arguments (-want,+got):\n%s", diff)
			}
			if *tail != tc.wantTail || *stateDir != tc.wantStateDir {
				t.Errorf("--tail %d --state-dir %q, want %d %q", *tail, *stateDir, tc.wantTail, tc.wantStateDir)
			}
		})
	}
}
