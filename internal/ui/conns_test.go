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

package ui

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

// testLimits are short enough to wait for.
var testLimits = connLimits{
	readHeader: 300 * time.Millisecond, read: 2 * time.Second, write: 2 * time.Second, idle: 600 * time.Millisecond,
	maxConns: 64, perAddr: 16,
}

// serveTest serves h as Run does, within limits, and returns its address.
func serveTest(t *testing.T, limits connLimits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := limits.server(closeRefused(h))
	go func() { _ = hs.Serve(limits.listen(ln)) }()
	t.Cleanup(func() { _ = hs.Close() })
	return ln.Addr().String()
}

// dialFrom opens a connection to addr from the loopback address src (127.0.0.0/8 is all local).
func dialFrom(ctx context.Context, src, addr string) (net.Conn, error) {
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 2 * time.Second}
	return d.DialContext(ctx, "tcp", addr)
}

// get sends one GET on conn and reads the answer's status.
func get(conn net.Conn, r *bufio.Reader, path string) (int, error) {
	req := "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return 0, err
	}
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// closedWithin reports whether the server closes conn within d: a closed connection reads an
// end of file or a reset, an open one times out.
func closedWithin(r io.Reader, conn net.Conn, d time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(d))
	_, err := r.Read(make([]byte, 1))
	ne := net.Error(nil)
	return !errors.As(err, &ne) || !ne.Timeout()
}

func okHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
}

// TestServerClosesIdleConnections: connections left idle after a request are closed after the
// idle timeout, and ones that never send a request after the header timeout, so many of them
// from one address are held only that long (issue 34: 2,000 of 2,000 were held).
func TestServerClosesIdleConnections(t *testing.T) {
	addr := serveTest(t, testLimits, okHandler())
	cases := map[string]struct {
		request bool
		want    time.Duration
	}{
		"idle after a request": {request: true, want: testLimits.idle},
		"no request at all":    {want: testLimits.readHeader},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			const n = 10 // within the per-address cap
			src := "127.0.0.2"
			if tc.request {
				src = "127.0.0.3"
			}
			type open struct {
				c net.Conn
				r *bufio.Reader
			}
			var conns []open
			for range n {
				c, err := dialFrom(t.Context(), src, addr)
				if err != nil {
					t.Fatal(err)
				}
				defer func() { _ = c.Close() }()
				r := bufio.NewReader(c)
				if tc.request {
					if code, err := get(c, r, "/healthz"); err != nil || code != http.StatusOK {
						t.Fatalf("GET /healthz: %d %v", code, err)
					}
				}
				conns = append(conns, open{c, r})
			}
			start := time.Now()
			var held atomic.Int64
			var wg sync.WaitGroup
			for _, o := range conns {
				wg.Go(func() {
					if !closedWithin(o.r, o.c, tc.want+2*time.Second) {
						held.Add(1)
					}
				})
			}
			wg.Wait()
			took := time.Since(start)
			t.Logf("%d of %d connections held %v after the last request", held.Load(), n, took.Round(time.Millisecond))
			if held.Load() != 0 {
				t.Fatalf("%d of %d connections still open after %v, want all closed after %v", held.Load(), n, took.Round(time.Millisecond), tc.want)
			}
			if took > tc.want+time.Second {
				t.Errorf("closed after %v, want after about %v", took.Round(time.Millisecond), tc.want)
			}
		})
	}
}

// TestServerCapsConnectionsPerAddress: one address holds at most its cap of connections, the
// ones beyond are closed at once, and another address is still served.
func TestServerCapsConnectionsPerAddress(t *testing.T) {
	limits := testLimits
	limits.readHeader, limits.idle = 10*time.Second, 10*time.Second // idle ones stay: the cap is what is tested
	addr := serveTest(t, limits, okHandler())
	const tries = 40
	var conns []net.Conn
	for range tries {
		if c, err := dialFrom(t.Context(), "127.0.0.4", addr); err == nil {
			conns = append(conns, c)
		}
	}
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	var open atomic.Int64
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			if !closedWithin(c, c, 500*time.Millisecond) {
				open.Add(1)
			}
		})
	}
	wg.Wait()
	held := int(open.Load())
	c, err := dialFrom(t.Context(), "127.0.0.5", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	code, err := get(c, bufio.NewReader(c), "/healthz")
	t.Logf("one address held %d of %d connections; another was answered %d %v", held, tries, code, err)
	if err != nil || code != http.StatusOK {
		t.Errorf("another address while one is at its cap: %d %v, want 200", code, err)
	}
	if diff := cmp.Diff(limits.perAddr, held); diff != "" {
		t.Errorf("connections one address holds (-want +got):\n%s", diff)
	}
}

// TestRefusedRequestsCloseTheConnection: a refused request (401, 403, 429) is answered with
// Connection: close and its connection closed, so a client repeating bad logins keeps no slot; a
// served request keeps its connection.
func TestRefusedRequestsCloseTheConnection(t *testing.T) {
	auth, err := NewLocalAuth()
	if err != nil {
		t.Fatal(err)
	}
	limits := testLimits
	limits.idle = 10 * time.Second
	addr := serveTest(t, limits, auth.Wrap(okHandler()))
	cases := map[string]struct {
		path, host string
		wantCode   int
		wantClosed bool
	}{
		"no session":          {path: "/jobs", wantCode: http.StatusUnauthorized, wantClosed: true},
		"a wrong login token": {path: "/jobs?token=wrong", wantCode: http.StatusUnauthorized, wantClosed: true},
		"another host name":   {path: "/jobs", host: "Host: evil.example\r\n", wantCode: http.StatusForbidden, wantClosed: true},
		"the health check":    {path: "/healthz", wantCode: http.StatusOK},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c, err := dialFrom(t.Context(), "127.0.0.6", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = c.Close() }()
			r := bufio.NewReader(c)
			req := "GET " + tc.path + " HTTP/1.1\r\n"
			if tc.host != "" {
				req += tc.host
			} else {
				req += "Host: 127.0.0.1\r\n"
			}
			if _, err := io.WriteString(c, req+"\r\n"); err != nil {
				t.Fatal(err)
			}
			resp, err := http.ReadResponse(r, nil)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.wantCode {
				t.Errorf("status %d, want %d", resp.StatusCode, tc.wantCode)
			}
			if resp.Close != tc.wantClosed {
				t.Errorf("Connection: close sent = %v, want %v", resp.Close, tc.wantClosed)
			}
			if closed := closedWithin(r, c, time.Second); closed != tc.wantClosed {
				t.Errorf("connection closed by the server within 1s = %v, want %v", closed, tc.wantClosed)
			}
		})
	}
}

// TestStreamsPerUser: one user holds at most maxStreamsPerUser live streams; the next is refused
// 429 with a sentence saying why, while another user still gets one, and a closed stream frees
// its place.
func TestStreamsPerUser(t *testing.T) {
	s := &Server{}
	started := make(chan struct{}, 2*maxStreamsPerUser)
	stream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		started <- struct{}{}
		<-r.Context().Done()
	})
	// As Access.Wrap does: the user from a header, for the test.
	asUser := func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			u := &User{Name: r.Header.Get("X-Test-User")}
			h.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
		})
	}
	limits := testLimits
	limits.perAddr, limits.maxConns = 64, 64
	addr := serveTest(t, limits, asUser(s.limitStreams(stream)))
	open := func(user string) (net.Conn, int, string) {
		t.Helper()
		c, err := dialFrom(t.Context(), "127.0.0.7", addr)
		if err != nil {
			t.Fatal(err)
		}
		r := bufio.NewReader(c)
		if _, err := io.WriteString(c, "GET /live/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Test-User: "+user+"\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		resp, err := http.ReadResponse(r, nil) //nolint:bodyclose // a stream's body is read until the test closes its connection
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(resp.Body)
			_ = c.Close()
			return nil, resp.StatusCode, strings.TrimSpace(string(body))
		}
		<-started
		return c, resp.StatusCode, ""
	}
	var got []string
	var alice []net.Conn
	for range maxStreamsPerUser {
		c, code, _ := open("alice")
		if c != nil {
			alice = append(alice, c)
		}
		got = append(got, fmt.Sprint(code))
	}
	defer func() {
		for _, c := range alice {
			_ = c.Close()
		}
	}()
	_, code, msg := open("alice")
	got = append(got, fmt.Sprintf("%d %s", code, msg))
	bob, code, _ := open("bob")
	if bob != nil {
		defer func() { _ = bob.Close() }()
	}
	got = append(got, fmt.Sprint(code))
	want := []string{"200", "200", "200", "200", "200", "200", "200", "200",
		`429 user "alice" has 8 live streams open, the most one user may: close a tab of the UI (or wait for a log stream to end) and reload`,
		"200"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("streams (-want +got):\n%s", diff)
	}
	// A stream that ends gives its place back.
	_ = alice[0].Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		c, code, _ := open("alice")
		if c != nil {
			_ = c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("alice's stream after she closed one: %d, want 200", code)
		}
		time.Sleep(20 * time.Millisecond) // polling the server for the freed place
	}
}

// TestStreamsOutliveTheReadAndWriteTimeouts: a live stream reads nothing and writes rarely, so
// the server's read and write timeouts must not end it; its events still arrive after both.
func TestStreamsOutliveTheReadAndWriteTimeouts(t *testing.T) {
	limits := testLimits
	limits.read, limits.write = 300*time.Millisecond, 300*time.Millisecond
	after := 3 * limits.read
	addr := serveTest(t, limits, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ev, err := newSSE(w)
		if err != nil {
			t.Error(err)
			return
		}
		select {
		case <-time.After(after): // a quiet stream, as between two changes
		case <-r.Context().Done():
			return
		}
		_ = ev.send("update", "late")
	}))
	c, err := dialFrom(t.Context(), "127.0.0.8", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	if _, err := io.WriteString(c, "GET /live/jobs HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, int64(len("event: update\ndata: late\n\n"))))
	if diff := cmp.Diff("event: update\ndata: late\n\n", string(body)); diff != "" {
		t.Errorf("the stream after %v, past the read and write timeouts (-want +got):\n%s", after, diff)
	}
}
