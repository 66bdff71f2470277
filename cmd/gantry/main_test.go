package main

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gantry-ml/gantry/internal/version"
)

func TestRun(t *testing.T) {
	version.Version = "v9.9.9-test"
	cases := map[string]struct {
		args       []string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		"version": {
			args:       []string{"version"},
			wantStdout: "v9.9.9-test\n",
		},
		"help": {
			args:       []string{"--help"},
			wantStdout: usage,
		},
		"no command": {
			wantCode:   2,
			wantStderr: usage,
		},
		"unknown command": {
			args:       []string{"deploy"},
			wantCode:   2,
			wantStderr: "gantry: unknown command \"deploy\"\n\n" + usage,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, nil, &stdout, &stderr)
			if diff := cmp.Diff(tc.wantCode, code); diff != "" {
				t.Errorf("exit code (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStdout, stdout.String()); diff != "" {
				t.Errorf("stdout (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantStderr, stderr.String()); diff != "" {
				t.Errorf("stderr (-want,+got):\n%s", diff)
			}
		})
	}
}
