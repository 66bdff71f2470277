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
