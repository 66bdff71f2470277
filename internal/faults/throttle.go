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

package faults

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
)

// ThrottleClientPrefix names the fault "throttle-client=<qps>:<seconds>": the manager's API
// client is held to qps requests a second for its first seconds, then gets its configured limits
// back, as a busy apiserver's priority and fairness would throttle it.
const ThrottleClientPrefix = "throttle-client="

// ThrottleClient is the "throttle-client=<qps>:<seconds>" fault.
func ThrottleClient(qps float64, d time.Duration) string {
	return fmt.Sprintf("%s%g:%d", ThrottleClientPrefix, qps, int(d.Seconds()))
}

func parseThrottle(faults []string) (qps float64, d time.Duration, ok bool, err error) {
	for _, f := range faults {
		spec, found := strings.CutPrefix(f, ThrottleClientPrefix)
		if !found {
			continue
		}
		q, secs, _ := strings.Cut(spec, ":")
		qps, err = strconv.ParseFloat(q, 64)
		n, err2 := strconv.Atoi(secs)
		if err != nil || err2 != nil || qps <= 0 || n < 1 {
			return 0, 0, false, fmt.Errorf("%s: want <qps>:<seconds>, both positive, got %q", ThrottleClientPrefix, spec)
		}
		return qps, time.Duration(n) * time.Second, true, nil
	}
	return 0, 0, false, nil
}

// WrapRESTConfig returns rc with the throttle-client fault when it is injected, rc otherwise.
func WrapRESTConfig(rc *rest.Config) (*rest.Config, error) {
	qps, d, ok, err := parseThrottle(enabled)
	if err != nil || !ok {
		return rc, err
	}
	rc = rest.CopyConfig(rc)
	burst := max(1, int(qps))
	rc.RateLimiter = &switchingLimiter{
		until:  time.Now().Add(d),
		slow:   flowcontrol.NewTokenBucketRateLimiter(float32(qps), burst),
		normal: flowcontrol.NewTokenBucketRateLimiter(rc.QPS, rc.Burst),
		now:    time.Now,
	}
	return rc, nil
}

// switchingLimiter is slow until a time, then normal.
type switchingLimiter struct {
	until        time.Time
	slow, normal flowcontrol.RateLimiter
	now          func() time.Time
}

var _ flowcontrol.RateLimiter = (*switchingLimiter)(nil)

func (l *switchingLimiter) current() flowcontrol.RateLimiter {
	if l.now().Before(l.until) {
		return l.slow
	}
	return l.normal
}

func (l *switchingLimiter) TryAccept() bool { return l.current().TryAccept() }

func (l *switchingLimiter) Accept() { l.current().Accept() }

func (l *switchingLimiter) Stop() { l.slow.Stop(); l.normal.Stop() }

func (l *switchingLimiter) QPS() float32 { return l.current().QPS() }

func (l *switchingLimiter) Wait(ctx context.Context) error { return l.current().Wait(ctx) }
