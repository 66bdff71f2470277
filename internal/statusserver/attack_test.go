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

package statusserver

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The hostile clients of TestHostileLoad.
const (
	rawTCP      = iota // never starts the TLS handshake
	slowHeaders        // sends its headers a byte every 500 ms
	bigHeader          // a 64 KiB header
	bigBody            // a 1 MiB body with a valid token
	idleAfter          // one refused request, then idle on the keep-alive connection
	kinds
)

var kindNames = [kinds]string{"no TLS handshake", "slow headers", "64 KiB header", "1 MiB body", "idle after a request"}

// kindOf spreads 40% raw TCP, 30% slow headers and 10% of each other kind.
func kindOf(i int) int {
	switch d := i % 10; {
	case d < 4:
		return rawTCP
	case d < 7:
		return slowHeaders
	case d == 7:
		return bigHeader
	case d == 8:
		return bigBody
	default:
		return idleAfter
	}
}

type kindResult struct {
	refused, accepted atomic.Int64
	mu                sync.Mutex
	statuses          map[string]int
	slowestCut        time.Duration
	errs              []string
}

func (k *kindResult) record(status string, cut time.Duration, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if err != nil {
		k.errs = append(k.errs, err.Error())
		return
	}
	if status != "" {
		k.statuses[status]++
	}
	k.slowestCut = max(k.slowestCut, cut)
}

type attackResult struct {
	kinds    [kinds]*kindResult
	duration time.Duration
	// open and peak count the hostile connections the server serves at once.
	open, peak atomic.Int64
}

func (a *attackResult) opened() func() {
	n := a.open.Add(1)
	for p := a.peak.Load(); n > p && !a.peak.CompareAndSwap(p, n); p = a.peak.Load() {
	}
	return func() { a.open.Add(-1) }
}

func (a *attackResult) String() string {
	var b strings.Builder
	var refused, accepted int64
	for i, k := range a.kinds {
		refused += k.refused.Load()
		accepted += k.accepted.Load()
		fmt.Fprintf(&b, "; %s: %d refused, %d served, answers %v, cut after at most %v",
			kindNames[i], k.refused.Load(), k.accepted.Load(), k.statuses, k.slowestCut.Round(100*time.Millisecond))
	}
	return fmt.Sprintf("%d connections refused at once, %d served (at most %d at a time), over %v%s",
		refused, accepted, a.peak.Load(), a.duration.Round(100*time.Millisecond), b.String())
}

// check: at most maxConns connections were served at once, slow ones were cut within 5 s (plus
// slack), oversized ones were answered 431 and 413, idle ones (full form) closed after 30 s.
func (a *attackResult) check(t *testing.T, full bool) {
	t.Helper()
	for i, k := range a.kinds {
		if len(k.errs) > 0 {
			t.Errorf("%s: %d unexpected outcomes, e.g. %s", kindNames[i], len(k.errs), k.errs[0])
		}
	}
	if peak := a.peak.Load(); peak > maxConns {
		t.Errorf("%d hostile connections were served at once, want at most %d", peak, maxConns)
	}
	// 5 s, and slack for a busy test machine (before the caps: over 10 s).
	bounds := map[int]time.Duration{rawTCP: 8 * time.Second, slowHeaders: 8 * time.Second}
	if full {
		bounds[idleAfter] = 35 * time.Second
	}
	for kind, bound := range bounds {
		if got := a.kinds[kind].slowestCut; got > bound {
			t.Errorf("%s: a connection was cut after %v, want within %v", kindNames[kind], got.Round(time.Millisecond), bound)
		}
	}
	for kind, want := range map[int]string{bigHeader: "HTTP/1.1 431 Request Header Fields Too Large", bigBody: "HTTP/1.1 413 Request Entity Too Large"} {
		k := a.kinds[kind]
		if k.accepted.Load() > 0 && (len(k.statuses) != 1 || k.statuses[want] == 0) {
			t.Errorf("%s: answers %v, want only %q", kindNames[kind], k.statuses, want)
		}
	}
}

// attack opens perAddr connections from each of addrs addresses and returns when every one has
// been cut off (or, for the idle ones in the quick form, held for 7 s). The first 1,000 open
// before the others, so that every kind holds slots when the rest arrive.
func attack(ctx context.Context, srv *loadServer, addrs, perAddr int, full bool) *attackResult {
	res := &attackResult{}
	for i := range res.kinds {
		res.kinds[i] = &kindResult{statuses: map[string]int{}}
	}
	start := time.Now()
	var wg, first sync.WaitGroup
	for i := range addrs * perAddr {
		if i == 1000 {
			first.Wait()
		}
		src := fmt.Sprintf("127.0.2.%d", 1+i%addrs)
		kind := kindOf(i)
		engaged := func() {}
		if i < 1000 {
			first.Add(1)
			engaged = sync.OnceFunc(first.Done)
		}
		wg.Go(func() {
			defer engaged()
			hostileClient(ctx, srv, hostile{src: src, kind: kind, name: fmt.Sprintf("job-%d", i), full: full}, res, engaged)
		})
	}
	wg.Wait()
	res.duration = time.Since(start)
	return res
}

// hostile is one hostile client: its address, kind and the TrainJob it names (one each, so that
// oversized bodies reach the size check rather than their TrainJob's rate limit).
type hostile struct {
	src, name string
	kind      int
	full      bool
}

// hostileClient plays h; engaged is called once its connection is served or refused.
func hostileClient(ctx context.Context, srv *loadServer, h hostile, res *attackResult, engaged func()) {
	k := res.kinds[h.kind]
	conn, err := srv.dial(ctx, h.src)
	if err != nil {
		k.refused.Add(1)
		return
	}
	defer func() { _ = conn.Close() }()
	if h.kind == rawTCP {
		if closedAtOnce(conn, 500*time.Millisecond) {
			k.refused.Add(1)
			return
		}
		k.accepted.Add(1)
		defer res.opened()()
		engaged()
		_, cut, err := waitClosed(conn, time.Now().Add(30*time.Second))
		k.record("", cut+500*time.Millisecond, err)
		return
	}
	tc, err := srv.handshake(ctx, conn)
	if err != nil {
		k.refused.Add(1)
		return
	}
	k.accepted.Add(1)
	defer res.opened()()
	engaged()
	head := "POST /apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/" + h.name + "/status HTTP/1.1\r\nHost: localhost\r\n"
	start := time.Now()
	switch h.kind {
	case slowHeaders:
		go func() {
			for _, b := range []byte(head + "X-Slow: " + strings.Repeat("a", 60)) {
				if _, err := tc.Write([]byte{b}); err != nil {
					return
				}
				time.Sleep(500 * time.Millisecond) // the attack's pace
			}
		}()
	case bigHeader:
		go func() { _, _ = io.WriteString(tc, head+"X-Big: "+strings.Repeat("a", 64<<10)+"\r\n\r\n") }()
	case bigBody:
		go func() {
			if _, err := io.WriteString(tc, head+"Authorization: Bearer valid\r\nContent-Length: 1048576\r\n\r\n"); err == nil {
				_, _ = tc.Write(make([]byte, 1<<20))
			}
		}()
	case idleAfter:
		if _, err := io.WriteString(tc, head+"Authorization: Bearer bad\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
			k.record("", 0, err)
			return
		}
		if !h.full {
			status, _, _ := waitClosed(tc, time.Now().Add(7*time.Second))
			k.record(status, 0, nil)
			return
		}
	}
	status, cut, err := waitClosed(tc, start.Add(40*time.Second))
	k.record(status, cut, err)
}

// sustainedFlood: 300 clients on each of 4 addresses reconnect as soon as they are cut, for 40 s;
// the per-address cap keeps room for everyone else, so every new reporter succeeds.
func sustainedFlood(t *testing.T, srv *loadServer) {
	ctx, cancel := context.WithTimeout(t.Context(), 40*time.Second)
	defer cancel()
	var held, refused atomic.Int64
	var wg sync.WaitGroup
	for i := range 4 * 300 {
		src := fmt.Sprintf("127.0.5.%d", 1+i%4)
		wg.Go(func() {
			for ctx.Err() == nil {
				conn, err := srv.dial(ctx, src)
				if err != nil {
					continue
				}
				if closedAtOnce(conn, 200*time.Millisecond) {
					refused.Add(1)
					_ = conn.Close()
					time.Sleep(10 * time.Millisecond) // a pause, so the test machine keeps up
					continue
				}
				held.Add(1)
				_, _, _ = waitClosed(conn, time.Now().Add(time.Minute))
				_ = conn.Close()
			}
		})
	}
	rep := startReporters(t.Context(), srv, 20, 2500*time.Millisecond)
	stop := make(chan struct{})
	newcomers := startNewcomers(t.Context(), srv, 500*time.Millisecond, stop)
	<-ctx.Done()
	close(stop)
	wg.Wait()
	peak := srv.stats(t)
	reports := rep.stop()
	fresh := <-newcomers
	t.Logf("sustained flood from 4 addresses: %d connections held until cut, %d refused at once; server: %s",
		held.Load(), refused.Load(), peak)
	t.Logf("established reporters: %s; new reporters: %s", summarize(reports), summarize(fresh))
	checkReports(t, "established reporter during the sustained flood", reports, false, 5*time.Second)
	checkReports(t, "new reporter during the sustained flood", fresh, false, 8*time.Second)
}
