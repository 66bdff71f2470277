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
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/google/go-cmp/cmp"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// testServer is a Server on 127.0.0.1 with a fresh serving certificate. Tests reach it from other
// loopback addresses (127.0.0.2 and up), which count against the connection caps as pods do.
type testServer struct {
	*Server
	addr  string
	roots *x509.CertPool
}

// servingCertDir writes a serving certificate of a new test CA into a new directory.
func servingCertDir(t *testing.T) (*utiltesting.TestCA, string) {
	t.Helper()
	ca, err := utiltesting.NewTestCA()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := ca.WriteServingCert(dir); err != nil {
		t.Fatal(err)
	}
	return ca, dir
}

func startTestServer(t *testing.T, opts Options) *testServer {
	t.Helper()
	ctrllog.SetLogger(logr.Discard()) // the certificate watcher logs through controller-runtime's root
	ca, dir := servingCertDir(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	opts.Listener, opts.CertDir = ln, dir
	if opts.Verifier == nil {
		opts.Verifier = &fakeVerifier{}
	}
	if opts.Applier == nil {
		opts.Applier = &fakeApplier{}
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Start(logr.NewContext(ctx, logr.Discard()))
	}()
	t.Cleanup(func() { cancel(); <-done })
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	ts := &testServer{Server: s, addr: ln.Addr().String(), roots: roots}
	eventually(t, func() error { return s.ReadyCheck()(httpRequest(t)) })
	return ts
}

// dial opens a TCP connection from the loopback address src.
func (ts *testServer) dial(ctx context.Context, src string) (net.Conn, error) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 30 * time.Second}
	return d.DialContext(ctx, "tcp", ts.addr)
}

// dialTLS opens a TLS connection from src, verifying the server.
func (ts *testServer) dialTLS(ctx context.Context, src string) (*tls.Conn, error) {
	conn, err := ts.dial(ctx, src)
	if err != nil {
		return nil, err
	}
	tc, err := ts.handshake(ctx, conn)
	if err != nil {
		_ = conn.Close()
		return nil, err
	}
	return tc, nil
}

// handshake completes TLS on conn; a connection the server closed at once fails it.
func (ts *testServer) handshake(ctx context.Context, conn net.Conn) (*tls.Conn, error) {
	tc := tls.Client(conn, &tls.Config{RootCAs: ts.roots, ServerName: "localhost", MinVersion: tls.VersionTLS12})
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		return nil, err
	}
	return tc, nil
}

// client is an HTTP client whose single keep-alive connection comes from src.
func (ts *testServer) client(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext:     d.DialContext,
		TLSClientConfig: &tls.Config{RootCAs: ts.roots, ServerName: "localhost", MinVersion: tls.VersionTLS12},
		MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, IdleConnTimeout: time.Minute,
	}}
}

// report posts a report for ns/name and returns the code.
func (ts *testServer) report(ctx context.Context, c *http.Client, name, token string) (int, error) {
	return ts.post(ctx, c, "/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/"+name+"/status", token,
		`{"trainerStatus":{"progressPercentage":42,"lastUpdatedTime":"2025-01-23T10:30:45Z"}}`)
}

// post sends body to path with token and returns the code.
func (ts *testServer) post(ctx context.Context, c *http.Client, path, token, body string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "https://"+ts.addr+path, strings.NewReader(body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

// waitClosed reads conn until the server closes it and returns the first status line it sent
// ("" for none) and how long that took; it gives up at the deadline.
func waitClosed(conn net.Conn, deadline time.Time) (string, time.Duration, error) {
	start := time.Now()
	if err := conn.SetReadDeadline(deadline); err != nil {
		return "", 0, err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	for err == nil {
		_, err = r.ReadString('\n')
	}
	if ne := net.Error(nil); errors.As(err, &ne) && ne.Timeout() {
		return strings.TrimSpace(line), 0, fmt.Errorf("still open after %v", time.Since(start).Round(time.Millisecond))
	}
	return strings.TrimSpace(line), time.Since(start), nil
}

// closedAtOnce reports whether the server closed conn (before any TLS handshake) within wait.
func closedAtOnce(conn net.Conn, wait time.Duration) bool {
	_ = conn.SetReadDeadline(time.Now().Add(wait))
	_, err := conn.Read(make([]byte, 1))
	ne := net.Error(nil)
	return err != nil && (!errors.As(err, &ne) || !ne.Timeout())
}

// raiseFileLimit lifts the soft limit of open files to the hard limit, for tests that hold
// thousands of connections.
func raiseFileLimit(t *testing.T, need uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	if lim.Cur < lim.Max {
		lim.Cur = lim.Max
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
			t.Fatal(err)
		}
	}
	if lim.Cur < need {
		t.Skipf("needs %d open files, the hard limit is %d", need, lim.Cur)
	}
}

// TestServerCutsHostileClients: slow and oversized clients are cut off within bounds of their
// own, not the generous ones a valid report needs.
func TestServerCutsHostileClients(t *testing.T) {
	ts := startTestServer(t, Options{})
	header := "POST " + route + " HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer tok\r\n"
	cases := map[string]struct {
		tls        bool
		send       func(conn net.Conn) error
		wantStatus string
		within     time.Duration
	}{
		"a connection that never starts the TLS handshake": {within: 5*time.Second + 2500*time.Millisecond},
		"headers sent a byte every 200 ms": {tls: true, within: 5*time.Second + 2500*time.Millisecond,
			wantStatus: "HTTP/1.1 400 Bad Request",
			send: func(conn net.Conn) error {
				for _, b := range []byte(header + "X-Slow: " + strings.Repeat("a", 100)) {
					if _, err := conn.Write([]byte{b}); err != nil {
						return nil // cut off
					}
					time.Sleep(200 * time.Millisecond) // the attack's pace, not synchronisation
				}
				return errors.New("the whole slow header was accepted")
			}},
		"a header of 24 KiB": {tls: true, wantStatus: "HTTP/1.1 431 Request Header Fields Too Large", within: 2 * time.Second,
			send: func(conn net.Conn) error {
				_, err := io.WriteString(conn, header+"X-Big: "+strings.Repeat("a", 24<<10)+"\r\n\r\n")
				return err
			}},
		"a body of 1 MiB": {tls: true, wantStatus: "HTTP/1.1 413 Request Entity Too Large", within: 2 * time.Second,
			send: func(conn net.Conn) error {
				if _, err := io.WriteString(conn, header+"Content-Length: 1048576\r\n\r\n"); err != nil {
					return err
				}
				_, _ = conn.Write(make([]byte, 1<<20)) // the server stops reading; an error is expected
				return nil
			}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			var conn net.Conn
			var err error
			if tc.tls {
				conn, err = ts.dialTLS(t.Context(), "127.0.0.2")
			} else {
				conn, err = ts.dial(t.Context(), "127.0.0.2")
			}
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = conn.Close() }()
			start := time.Now()
			sent := make(chan error, 1)
			go func() {
				if tc.send == nil {
					sent <- nil
					return
				}
				sent <- tc.send(conn)
			}()
			status, _, err := waitClosed(conn, start.Add(tc.within+5*time.Second))
			elapsed := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			if elapsed > tc.within {
				t.Errorf("closed after %v, want within %v", elapsed.Round(time.Millisecond), tc.within)
			}
			if diff := cmp.Diff(tc.wantStatus, status); diff != "" {
				t.Errorf("status line (-want,+got):\n%s", diff)
			}
			_ = conn.Close()
			if err := <-sent; err != nil {
				t.Error(err)
			}
		})
	}
}

// TestServerCapsConnections: beyond maxConnsPerAddr connections from one address, or maxConns in
// all, a new connection is closed at once, before any TLS work; a client on an established connection keeps
// reporting, a new one fails fast instead of hanging, and the probes, which come from the
// manager's own loopback address, still pass. Once the flood is gone, new clients are served.
func TestServerCapsConnections(t *testing.T) {
	raiseFileLimit(t, 4000)
	ts := startTestServer(t, Options{})
	ctx := t.Context()
	established := ts.client("127.0.0.50")
	if code, err := ts.report(ctx, established, "job", "tok"); err != nil || code != http.StatusOK {
		t.Fatalf("first report: %d %v", code, err)
	}

	flood := func(src string, n int) (kept int, conns []net.Conn) {
		conns = make([]net.Conn, n)
		closed := make([]bool, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				conn, err := ts.dial(ctx, src)
				if err != nil {
					closed[i] = true
					return
				}
				conns[i] = conn
				closed[i] = closedAtOnce(conn, time.Second)
			})
		}
		wg.Wait()
		for _, c := range closed {
			if !c {
				kept++
			}
		}
		return kept, conns
	}
	var all []net.Conn
	defer func() {
		for _, c := range all {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	kept, conns := flood("127.0.0.2", maxConnsPerAddr+50)
	all = append(all, conns...)
	if diff := cmp.Diff(maxConnsPerAddr, kept); diff != "" {
		t.Errorf("connections kept from one address (-want,+got):\n%s", diff)
	}
	total := kept
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := range maxConns / maxConnsPerAddr {
		wg.Go(func() {
			k, c := flood(fmt.Sprintf("127.0.0.%d", 3+i), maxConnsPerAddr+8)
			mu.Lock()
			defer mu.Unlock()
			total += k
			all = append(all, c...)
		})
	}
	wg.Wait()
	if diff := cmp.Diff(maxConns-1, total); diff != "" {
		t.Errorf("connections kept in all, besides the established client's (-want,+got):\n%s", diff)
	}

	if code, err := ts.report(ctx, established, "job", "tok"); err != nil || code != http.StatusOK {
		t.Errorf("report on the established connection while full: %d %v, want 200", code, err)
	}
	start := time.Now()
	if code, err := ts.report(ctx, ts.client("127.0.0.60"), "job", "tok"); err == nil {
		t.Errorf("a new client while full got %d, want its connection closed", code)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("a new client while full failed after %v, want at once", d)
	}
	for name, check := range map[string]func(*http.Request) error{"ready": ts.ReadyCheck(), "live": ts.LiveCheck()} {
		if err := check(httpRequest(t)); err != nil {
			t.Errorf("%s check while full = %v", name, err)
		}
	}

	// Closed connections give their slots back.
	for _, c := range all {
		if c != nil {
			_ = c.Close()
		}
	}
	eventually(t, func() error {
		code, err := ts.report(ctx, ts.client("127.0.0.61"), "job", "tok")
		if err == nil && code != http.StatusOK {
			t.Errorf("a new client once the flood is gone got %d, want 200", code)
		}
		return err
	})
}
