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

// Package reachable tells an apiserver that is away or overloaded from one that answered, and
// waits for it: a manager started during a control-plane outage waits instead of exiting into a
// crash loop, and the reliability suite retries what such an outage left undecided.
package reachable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Unreachable reports whether err is an apiserver's absence or overload rather than its answer.
func Unreachable(err error) bool {
	var netErr net.Error
	// IsProbableEOF compares with io.ErrUnexpectedEOF itself; client-go wraps it when the
	// apiserver goes away in the middle of an answer ("unexpected error when reading response body").
	return utilnet.IsConnectionRefused(err) || utilnet.IsConnectionReset(err) || utilnet.IsProbableEOF(err) ||
		errors.Is(err, io.ErrUnexpectedEOF) ||
		(errors.As(err, &netErr) && netErr.Timeout()) ||
		apierrors.IsServiceUnavailable(err) || apierrors.IsTimeout(err) || apierrors.IsServerTimeout(err) ||
		apierrors.IsTooManyRequests(err) || apierrors.IsInternalError(err) ||
		// Some callers flatten the error chain into text.
		strings.Contains(err.Error(), "connection refused")
}

// The back-off of Until; variables for the unit test.
var firstRetry, maxRetry = 500 * time.Millisecond, 10 * time.Second

// Until runs f until it succeeds or fails for a reason other than an unreachable or overloaded
// apiserver (a refusal, or a mistake in the configuration, ends it at once), logging each wait.
func Until(ctx context.Context, log logr.Logger, f func(context.Context) error) error {
	delay := firstRetry
	for {
		err := f(ctx)
		if err == nil || !Unreachable(err) {
			return err
		}
		log.Info("Waiting for the apiserver", "error", err.Error(), "retryIn", delay)
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w while waiting for the apiserver (last: %w)", ctx.Err(), err)
		case <-time.After(delay):
		}
		delay = min(2*delay, maxRetry)
	}
}
