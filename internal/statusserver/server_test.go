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
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// TestServer serves the route over TLS with the certificate in CertDir, follows a new
// certificate without a restart, answers its probes once serving, and stops with its context.
func TestServer(t *testing.T) {
	ca, err := utiltesting.NewTestCA()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	first, err := ca.WriteServingCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Listener: ln, CertDir: dir, Verifier: &fakeVerifier{}, Applier: &fakeApplier{}})
	if err != nil {
		t.Fatal(err)
	}
	probe := func(check func(*http.Request) error) error {
		return check(httpRequest(t))
	}
	if err := probe(s.ReadyCheck()); err == nil {
		t.Error("ReadyCheck passed before the server started")
	}
	if err := probe(s.LiveCheck()); err != nil {
		t.Errorf("LiveCheck before the server started = %v, want nil", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- s.Start(ctx) }()

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca.PEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}, Timeout: 5 * time.Second}
	url := "https://" + ln.Addr().String() + route
	var serial *big.Int
	eventually(t, func() error {
		req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(`{}`))
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		if diff := cmp.Diff("200 {}\n", resp.Status[:3]+" "+string(body)); diff != "" {
			t.Errorf("response (-want,+got):\n%s", diff)
		}
		serial = resp.TLS.PeerCertificates[0].SerialNumber
		return nil
	})
	if serial.Cmp(first) != 0 {
		t.Errorf("served certificate %v, want %v", serial, first)
	}
	for name, check := range map[string]func(*http.Request) error{"ready": s.ReadyCheck(), "live": s.LiveCheck()} {
		if err := probe(check); err != nil {
			t.Errorf("%s check while serving = %v", name, err)
		}
	}

	second, err := ca.WriteServingCert(dir)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, func() error {
		conn, err := tls.Dial("tcp", ln.Addr().String(), &tls.Config{RootCAs: roots, ServerName: "localhost", MinVersion: tls.VersionTLS12})
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		if got := conn.ConnectionState().PeerCertificates[0].SerialNumber; got.Cmp(second) != 0 {
			return fmt.Errorf("still serving %v, want %v", got, second)
		}
		return nil
	})

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Start() = %v after its context ended, want nil", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("the server did not stop")
	}
}

func TestServerOffersHTTP1Only(t *testing.T) {
	ts := startTestServer(t, Options{})
	eventually(t, func() error {
		conn, err := tls.Dial("tcp", ts.addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"h2", "http/1.1"}}) //nolint:gosec // only ALPN is checked
		if err != nil {
			return err
		}
		defer func() { _ = conn.Close() }()
		if p := conn.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
			return fmt.Errorf("negotiated %q, want http/1.1", p)
		}
		return nil
	})
}

func httpRequest(t *testing.T) *http.Request {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, "/readyz", nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("not within 20s: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
