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
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLeaderIdentity(t *testing.T) {
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		pod string
		// stable: two processes of the same pod hold the lease as one.
		wantStable bool
		wantPrefix string
	}{
		"in a pod: its name, the same after a restart": {pod: "kubeflow-trainer-controller-manager-7d9f-x2x", wantStable: true, wantPrefix: "kubeflow-trainer-controller-manager-7d9f-x2x"},
		"outside a pod: a new holder per process":      {wantPrefix: host + "_"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Setenv(podNameEnv, tc.pod)
			first, second := leaderIdentity(), leaderIdentity()
			got := struct {
				Stable    bool
				HasPrefix bool
			}{first == second, strings.HasPrefix(first, tc.wantPrefix)}
			want := struct {
				Stable    bool
				HasPrefix bool
			}{tc.wantStable, true}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("identities %q, %q (-want,+got):\n%s", first, second, diff)
			}
		})
	}
}
