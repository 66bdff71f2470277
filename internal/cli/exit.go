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
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"syscall"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/gantry-ml/gantry/internal/jobview"
)

// Exit codes, documented in README ("Command line"), docs/cli.md and every verb's --help: CI
// tells "the training failed" (1) from "the command could not do its work" (2-7). 1 is given
// only where a TrainJob was seen Failed; an error of no other kind (a webhook down, an internal
// error of the API server) is 7, never 1, so a script does not read an outage as a bad model.
const (
	ExitOK          = 0
	ExitJobFailed   = 1
	ExitUsage       = 2
	ExitTimeout     = 3
	ExitNotFound    = 4
	ExitForbidden   = 5
	ExitUnreachable = 6
	ExitOther       = 7
)

// ExitCodesHelp is the sentence every verb's --help ends with.
const ExitCodesHelp = `Exit codes: 0 success (or the TrainJob completed), 1 the TrainJob failed (and nothing else),
2 usage error or input the cluster refuses, 3 timeout, 4 not found (job, step or runtime),
5 forbidden, 6 the API server cannot be reached, 7 any other error (e.g. the API server or a
webhook answered with an internal error, or a wait the finished job can never satisfy).`

// exitError carries an exit code with the message printed for it.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func withCode(code int, err error) error { return &exitError{code: code, err: err} }

func usageErrorf(format string, args ...any) error {
	return withCode(ExitUsage, fmt.Errorf(format, args...))
}

// exitCode maps an error to the documented exit code.
func exitCode(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &ee):
		return ee.code
	case errors.Is(err, jobview.ErrStepNotFound), apierrors.IsNotFound(err):
		return ExitNotFound
	case apierrors.IsInvalid(err), apierrors.IsBadRequest(err):
		return ExitUsage // the apiserver or a webhook refused the input
	case apierrors.IsForbidden(err), apierrors.IsUnauthorized(err):
		return ExitForbidden
	case errors.Is(err, context.DeadlineExceeded), apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return ExitTimeout
	case unreachable(err):
		return ExitUnreachable
	default:
		return ExitOther
	}
}

// unreachable: the API server could not be reached at all (refused, no route, bad DNS, TLS).
func unreachable(err error) bool {
	var netErr net.Error
	var urlErr *url.Error
	var opErr *net.OpError
	return errors.As(err, &opErr) || errors.As(err, &urlErr) || errors.As(err, &netErr) ||
		errors.Is(err, syscall.ECONNREFUSED)
}
