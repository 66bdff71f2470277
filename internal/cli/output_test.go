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
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// TestColouredTableAligns: colour codes must not shift the columns after STATE.
func TestColouredTableAligns(t *testing.T) {
	render := func(color bool) string {
		o := &Options{Color: color}
		var out bytes.Buffer
		w := tableWriter(&out)
		row(w, "NAME", o.stateHeader(), "AGE")
		for _, s := range []trainjob.State{trainjob.StateRunning, trainjob.StateCreated, trainjob.StateRestarting} {
			row(w, "job", o.stateText(s), "5m")
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	plain, coloured := render(false), render(true)
	if !strings.Contains(coloured, "\x1b[36mRunning\x1b[0m") {
		t.Errorf("no colour in %q", coloured)
	}
	// Without the codes, each line has its AGE at the same column as the plain table's.
	for i, l := range strings.Split(ansi.ReplaceAllString(coloured, ""), "\n") {
		want := strings.Split(plain, "\n")[i]
		if strings.Index(l, "5m") != strings.Index(want, "5m") || strings.Index(l, "AGE") != strings.Index(want, "AGE") {
			t.Errorf("line %d is misaligned:\n%q\nwant the columns of\n%q", i, l, want)
		}
	}
}

func TestColorWanted(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	if colorWanted(&bytes.Buffer{}) {
		t.Error("colour on a buffer")
	}
	if colorWanted(nil) {
		t.Error("colour on nothing")
	}
}

func TestExitCode(t *testing.T) {
	gr := schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}
	cases := []struct {
		name string
		err  error
		want int
	}{
		{"nil", nil, ExitOK},
		{"job failed", withCode(ExitJobFailed, errors.New("x")), ExitJobFailed},
		{"usage", usageErrorf("x"), ExitUsage},
		{"refused by admission", apierrors.NewInvalid(schema.GroupKind{Kind: "TrainJob"}, "a", field.ErrorList{field.Required(field.NewPath("spec"), "")}), ExitUsage},
		{"not found", apierrors.NewNotFound(gr, "a"), ExitNotFound},
		{"not found, wrapped", fmt.Errorf("reading: %w", apierrors.NewNotFound(gr, "a")), ExitNotFound},
		{"missing step", &jobview.StepError{Job: "a", Step: "node-0"}, ExitNotFound},
		{"forbidden", apierrors.NewForbidden(gr, "a", errors.New("no")), ExitForbidden},
		{"unauthorized", apierrors.NewUnauthorized("who"), ExitForbidden},
		{"deadline", context.DeadlineExceeded, ExitTimeout},
		{"refused connection", &url.Error{Op: "Get", URL: "https://x", Err: &net.OpError{Op: "dial", Err: errors.New("refused")}}, ExitUnreachable},
		{"webhook down", apierrors.NewInternalError(errors.New(`failed calling webhook "vtrainjob.gantry.dev": connection refused`)), ExitOther},
		{"apiserver unavailable", apierrors.NewServiceUnavailable("etcd"), ExitOther},
		{"anything else", errors.New("boom"), ExitOther},
	}
	var got, want []string
	for _, tc := range cases {
		got = append(got, fmt.Sprintf("%s: %d", tc.name, exitCode(tc.err)))
		want = append(want, fmt.Sprintf("%s: %d", tc.name, tc.want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("exitCode (-want +got):\n%s", diff)
	}
}
