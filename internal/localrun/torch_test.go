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

package localrun

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	jobset "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

func TestTorchDefect(t *testing.T) {
	cases := []struct {
		torch, python string
		want          bool
	}{
		{"1.13.0a0+gitunknown", "3.11", true}, // Debian 12's python3-torch
		{"1.13.1+cpu", "3.12", true},
		{"1.12.1", "3.13", true},
		{"1.13.1", "3.10", false}, // Python 3.10 still iterates an IntFlag's zero member
		{"1.13.1", "3.9", false},
		{"2.0.0", "3.11", false}, // torch 2.0 builds the member from the value
		{"2.5.1+cu121", "3.12", false},
		{"10.0", "3.11", false},
		{"", "3.11", false}, // unknown: left alone
		{"abc", "3.11", false},
		{"1.13.1", "", false},
		{"1.13.1", "three", false},
	}
	for _, tc := range cases {
		if got := torchDefect(tc.torch, tc.python); got != tc.want {
			t.Errorf("torchDefect(%q, %q) = %t, want %t", tc.torch, tc.python, got, tc.want)
		}
	}
}

// torchJobSet is a two-node JobSet whose node runs command with env.
func torchJobSet(command []string, env ...corev1.EnvVar) func(*jobset.JobSet, *corev1.ConfigMap) {
	return func(js *jobset.JobSet, _ *corev1.ConfigMap) {
		js.Spec.ReplicatedJobs[0].Replicas = 2
		c := &podSpec(js).Containers[0]
		c.Command, c.Env = command, env
	}
}

// TestTorchRedirects: a torchrun step whose torch has the defect gets PET_REDIRECTS and PET_TEE
// (each the user has not set, in the TrainJob or this shell), listed as rewrites, with one note
// for the run; any other step, torch or user's choice is left as it is.
func TestTorchRedirects(t *testing.T) {
	defective := func(string) (TorchVersions, error) {
		return TorchVersions{Torch: "1.13.0a0+gitunknown", Python: "3.11"}, nil
	}
	fixed := func(string) (TorchVersions, error) { return TorchVersions{Torch: "2.5.1", Python: "3.12"}, nil }
	broken := func(string) (TorchVersions, error) { return TorchVersions{}, errors.New("no module named torch") }
	torchrun := []string{"/usr/bin/torchrun", "train.py"}
	both := []string{"PET_REDIRECTS", "PET_TEE"}
	cases := []struct {
		name    string
		command []string
		env     []corev1.EnvVar
		shell   map[string]string
		probe   func(string) (TorchVersions, error)
		want    []string // the variables set, on each step
		python  string   // what the probe was asked about ("" if never)
	}{
		{name: "torchrun with the defect", command: torchrun, probe: defective, want: both, python: "/usr/bin/python3.11"},
		{name: "python -m torch.distributed.run", command: []string{"python3.11", "-m", "torch.distributed.run", "t.py"}, probe: defective, want: both, python: "python3.11"},
		{name: "torchrun in a shell", command: []string{"bash", "-c", "cd /w && torchrun t.py"}, probe: defective, want: both, python: "/usr/bin/python3.11"},
		{name: "torch 2", command: torchrun, probe: fixed, python: "/usr/bin/python3.11"},
		{name: "no torch found", command: torchrun, probe: broken, python: "/usr/bin/python3.11"},
		{name: "no torchrun", command: []string{"python3", "train.py"}, probe: defective},
		{name: "both set in the TrainJob", command: torchrun, probe: defective,
			env: []corev1.EnvVar{{Name: "PET_REDIRECTS", Value: "3"}, {Name: "PET_TEE", Value: "0:3"}}},
		{name: "both set in the shell", command: torchrun, probe: defective, shell: map[string]string{"PET_REDIRECTS": "1", "PET_TEE": "1"}},
		{name: "redirects set in the shell", command: torchrun, probe: defective, shell: map[string]string{"PET_REDIRECTS": "1"},
			want: []string{"PET_TEE"}, python: "/usr/bin/python3.11"},
		{name: "tee set in the TrainJob", command: torchrun, probe: defective, env: []corev1.EnvVar{{Name: "PET_TEE", Value: "2"}},
			want: []string{"PET_REDIRECTS"}, python: "/usr/bin/python3.11"},
	}
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "torchrun"), []byte("#!/usr/bin/python3.11\nimport re\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var asked []string
			opts := testOptions()
			opts.TorchProbe = func(python string) (TorchVersions, error) {
				asked = append(asked, python)
				return tc.probe(python)
			}
			opts.LookupEnv = func(name string) (string, bool) { v, ok := tc.shell[name]; return v, ok }
			if tc.command[0] == "/usr/bin/torchrun" {
				tc.command = append([]string{filepath.Join(bin, "torchrun")}, tc.command[1:]...)
			}
			plan, err := NewPlan(hostileJobSet(t, torchJobSet(tc.command, tc.env...)), opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range plan.Steps {
				var set []string
				for _, r := range s.Rewrites {
					if r.Why == WhyTorch {
						set = append(set, strings.TrimPrefix(r.Where, "env "))
						if v := envValue(s.Env, strings.TrimPrefix(r.Where, "env ")); v != "9:1" || r.To != "9:1" {
							t.Errorf("step %s: %s is %q (rewrite to %q), want 9:1", s.Name, r.Where, v, r.To)
						}
					}
				}
				if diff := cmp.Diff(tc.want, set); diff != "" {
					t.Errorf("step %s: the variables set (-want,+got):\n%s", s.Name, diff)
				}
				for _, e := range tc.env {
					if v := envValue(s.Env, e.Name); v != e.Value {
						t.Errorf("step %s: the TrainJob's %s=%s became %q", s.Name, e.Name, e.Value, v)
					}
				}
			}
			var notes []string
			for _, w := range plan.Warnings {
				if strings.Contains(w, "PET_") {
					notes = append(notes, w)
				}
			}
			if len(notes) != min(len(tc.want), 1) {
				t.Errorf("notes about PET_*: %q, want %d", notes, min(len(tc.want), 1))
			}
			if len(notes) == 1 && !strings.Contains(notes[0], "torch 1.13.0a0+gitunknown under Python 3.11") {
				t.Errorf("the note does not name the torch found: %s", notes[0])
			}
			wantAsked := []string(nil)
			if tc.python != "" {
				wantAsked = []string{tc.python} // once per run, not per step
			}
			if diff := cmp.Diff(wantAsked, asked); diff != "" {
				t.Errorf("the probe was asked about (-want,+got):\n%s", diff)
			}
		})
	}
}

func envValue(env []EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestProbeTorch runs the probe's Python code on a fake interpreter that prints what Python
// would: the versions are read from its two words.
func TestProbeTorch(t *testing.T) {
	python := filepath.Join(t.TempDir(), "python3")
	if err := os.WriteFile(python, []byte("#!/bin/sh\necho 3.11 1.13.0a0+gitunknown\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := ProbeTorch(python)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TorchVersions{Torch: "1.13.0a0+gitunknown", Python: "3.11"}, got); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if _, err := ProbeTorch(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("an absent interpreter gave no error")
	}
}
