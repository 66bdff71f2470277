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
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// attackers are the addresses of TestAttackersLeaveRoomForReporters: as many as took every
// slot when one address could hold an eighth of them (issue 34).
const attackers = 8

// TestAttackersLeaveRoomForReporters: a few addresses opening as many connections as they can,
// idle or with bad tokens, hold at most their per-address caps, far below the total, so a
// reporter arriving afterwards is served at once.
func TestAttackersLeaveRoomForReporters(t *testing.T) {
	raiseFileLimit(t, 3000)
	cases := map[string]struct {
		badToken bool // complete TLS, send a request with a bad token, then stay idle
		wantHeld int
	}{
		"connections that never start the TLS handshake": {wantHeld: attackers * maxConnsPerAddr},
		"connections idle after a bad token":             {badToken: true, wantHeld: 0},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			ts := startTestServer(t, Options{Verifier: staticVerifier("good"), Applier: nopApplier{}})
			ctx := t.Context()
			var mu sync.Mutex
			var conns []net.Conn
			defer func() {
				for _, c := range conns {
					_ = c.Close()
				}
			}()
			var wg sync.WaitGroup
			for a := range attackers {
				for range maxConns/attackers + 16 {
					wg.Go(func() {
						if c := openAttacker(ctx, ts, fmt.Sprintf("127.0.0.%d", 2+a), tc.badToken); c != nil {
							mu.Lock()
							defer mu.Unlock()
							conns = append(conns, c)
						}
					})
				}
			}
			wg.Wait()
			held := stillOpen(conns, tc.badToken)
			start := time.Now()
			code, err := ts.report(ctx, ts.client("127.0.0.100"), "job", "good")
			served := time.Since(start)
			t.Logf("%d attacker connections held (of %d attempted from %d addresses); a reporter was answered %d %v after %v",
				held, attackers*(maxConns/attackers+16), attackers, code, err, served.Round(time.Millisecond))
			if err != nil || code != http.StatusOK {
				t.Fatalf("a reporter while attacked: %d %v, want 200", code, err)
			}
			if served > 2*time.Second {
				t.Errorf("a reporter while attacked was served after %v, want within 2s", served)
			}
			if diff := cmp.Diff(tc.wantHeld, held); diff != "" {
				t.Errorf("attacker connections held (-want,+got):\n%s", diff)
			}
		})
	}
}

// openAttacker opens a connection from src; with badToken it also completes TLS and is answered
// a request with a bad token. It returns nil when the server refused it at once.
func openAttacker(ctx context.Context, ts *testServer, src string, badToken bool) net.Conn {
	conn, err := ts.dial(ctx, src)
	if err != nil {
		return nil
	}
	if !badToken {
		if closedAtOnce(conn, 500*time.Millisecond) {
			_ = conn.Close()
			return nil
		}
		return conn
	}
	tc, err := ts.handshake(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil
	}
	if _, err := io.WriteString(tc, "POST "+route+" HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer bad\r\nContent-Length: 2\r\n\r\n{}"); err != nil {
		_ = tc.Close()
		return nil
	}
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		_ = tc.Close()
		return nil
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return tc
}

// stillOpen counts the connections the server has not closed. A closed one reads an end of
// file or a reset at once; an open one times out. Connections that got an answer are given a
// second for the server's close to arrive.
func stillOpen(conns []net.Conn, answered bool) int {
	wait := 200 * time.Millisecond
	if answered {
		wait = time.Second
	}
	var open atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(wait))
			_, err := c.Read(make([]byte, 1))
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				open.Add(1)
			}
		})
	}
	wg.Wait()
	return int(open.Load())
}

// TestRefusedRequestsCloseTheConnection: a request the server refuses is answered with
// Connection: close and its connection closed, so its slot is free at once; a valid report's
// connection is kept for the next report.
func TestRefusedRequestsCloseTheConnection(t *testing.T) {
	ts := startTestServer(t, Options{Verifier: staticVerifier("good"), Applier: nopApplier{}})
	cases := map[string]struct {
		request    string
		wantStatus int
		wantClosed bool
	}{
		"no token": {request: "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 2\r\n\r\n{}",
			wantStatus: http.StatusForbidden, wantClosed: true},
		"a bad token": {request: "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer bad\r\nContent-Length: 2\r\n\r\n{}",
			wantStatus: http.StatusForbidden, wantClosed: true},
		"an unknown path": {request: "GET /metrics HTTP/1.1\r\nHost: localhost\r\n\r\n",
			wantStatus: http.StatusNotFound, wantClosed: true},
		"a body too large": {request: "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer good\r\nContent-Length: 70000\r\n\r\n" + strings.Repeat(" ", 70000),
			wantStatus: http.StatusRequestEntityTooLarge, wantClosed: true},
		"a valid report": {request: "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer good\r\nContent-Length: 2\r\n\r\n{}",
			wantStatus: http.StatusOK},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, err := ts.dialTLS(t.Context(), "127.0.0.2")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			go func() { _, _ = io.WriteString(conn, tc.request) }()
			r := bufio.NewReader(conn)
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantStatus {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantStatus)
			}
			if got := resp.Close; got != tc.wantClosed {
				t.Errorf("Connection: close sent = %v, want %v", got, tc.wantClosed)
			}
			_ = conn.SetReadDeadline(time.Now().Add(time.Second))
			_, err = r.ReadByte()
			ne := net.Error(nil)
			if closed := !errors.As(err, &ne) || !ne.Timeout(); closed != tc.wantClosed {
				t.Errorf("connection closed by the server within 1s = %v (%v), want %v", closed, err, tc.wantClosed)
			}
		})
	}
}

// TestServerClosesIdleConnections: a connection idle after a report is closed after the idle
// timeout, and one that sends no request after its TLS handshake after the header timeout.
func TestServerClosesIdleConnections(t *testing.T) {
	to := defaultTimeouts
	to.readHeader, to.idle = 300*time.Millisecond, 600*time.Millisecond
	ts := startTestServer(t, Options{Verifier: staticVerifier("good"), Applier: nopApplier{}, timeouts: &to})
	cases := map[string]struct {
		request string
		want    time.Duration
	}{
		"idle after a report":            {request: "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer good\r\nContent-Length: 2\r\n\r\n{}", want: to.idle},
		"no request after the handshake": {want: to.readHeader},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			conn, err := ts.dialTLS(t.Context(), "127.0.0.2")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			r := bufio.NewReader(conn)
			if tc.request != "" {
				if _, err := io.WriteString(conn, tc.request); err != nil {
					t.Fatal(err)
				}
				resp, err := http.ReadResponse(r, nil)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			start := time.Now()
			_ = conn.SetReadDeadline(start.Add(tc.want + 3*time.Second))
			_, err = r.ReadByte()
			took := time.Since(start)
			if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("still open after %v, want closed after %v", took.Round(time.Millisecond), tc.want)
			}
			if took < tc.want-100*time.Millisecond || took > tc.want+time.Second {
				t.Errorf("closed after %v, want after about %v", took.Round(time.Millisecond), tc.want)
			}
		})
	}
}
