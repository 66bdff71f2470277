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

package reachable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// TestUntil: the manager's start waits out an unreachable or overloaded apiserver and
// stops at once on an answer that waiting cannot change.
var errMistake = errors.New("leader election namespace must be set")

func TestUntil(t *testing.T) {
	firstRetry, maxRetry = time.Millisecond, 4*time.Millisecond
	forbidden := apierrors.NewForbidden(schema.GroupResource{Resource: "secrets"}, "cert", errors.New("no RBAC"))
	cases := map[string]struct {
		answers   []error
		wantCalls int
		wantErr   error
	}{
		"reachable":                             {answers: []error{nil}, wantCalls: 1},
		"refused, then reachable":               {answers: []error{syscall.ECONNREFUSED, nil}, wantCalls: 2},
		"overloaded, then answers":              {answers: []error{apierrors.NewTooManyRequests("busy", 1), nil}, wantCalls: 2},
		"forbidden stops at once":               {answers: []error{forbidden, nil}, wantCalls: 1, wantErr: forbidden},
		"a configuration mistake stops at once": {answers: []error{errMistake, nil}, wantCalls: 1, wantErr: errMistake},
		// client-go's words when the apiserver goes away while it answers (R4 saw it).
		"the answer cut off, then reachable": {
			answers: []error{fmt.Errorf("unexpected error when reading response body. Please retry. Original error: %w", io.ErrUnexpectedEOF), nil}, wantCalls: 2,
		},
		"refused, as discovery words it": {
			answers: []error{errors.New(`failed to get server groups: Get "https://127.0.0.1:6443/api": dial tcp 127.0.0.1:6443: connect: connection refused`), nil}, wantCalls: 2,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			calls := 0
			err := Until(t.Context(), logr.Discard(), func(context.Context) error {
				calls++
				return tc.answers[calls-1]
			})
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("err = %v, want %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(tc.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want,+got):\n%s", diff)
			}
		})
	}
	t.Run("a cancelled start says why it waited", func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		err := Until(ctx, logr.Discard(), func(context.Context) error { cancel(); return syscall.ECONNREFUSED })
		if !errors.Is(err, syscall.ECONNREFUSED) || !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want the cancellation and the last error", err)
		}
	})
}
