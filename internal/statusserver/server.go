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

// Package statusserver is the HTTPS server training pods report progress to: one route, POST
// /apis/trainer.kubeflow.org/v1alpha1/namespaces/{namespace}/trainjobs/{name}/status, whose
// body {"trainerStatus": {...}} replaces the TrainJob's status.trainerStatus. Callers prove they
// belong to the TrainJob with a service-account token projected for that TrainJob's audience.
package statusserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	stdlog "log"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	"github.com/gantry-ml/gantry/internal/cert"
)

// Timeouts and limits of the server. A request's API work is bounded below the write timeout, so
// a slow apiserver or a saturated client rate limit still gets an answer to the caller. A client
// gets 5 s for the TLS handshake and again for its headers (net/http bounds the handshake by the
// shortest timeout), so a slow one (slowloris) holds its slot no longer; a valid report's headers
// (a token of about 1 KiB) arrive in milliseconds. Idle keep-alive connections are closed after
// 30 s: the SDK reports every 5 s on its connection and keeps it, one that has gone frees its
// slot. Headers are at most 16 KiB (net/http adds 4 KiB): a projected token is 1 to 2 KiB.
var defaultTimeouts = timeouts{
	readHeader: 5 * time.Second,
	read:       10 * time.Second,
	write:      10 * time.Second,
	idle:       30 * time.Second,
	request:    8 * time.Second,
}

const maxHeaderBytes = 16 << 10

// timeouts of the server, changed only by tests (an idle timeout of 30 s is too long to wait for).
type timeouts struct {
	readHeader, read, write, idle, request time.Duration
}

// Options configure the server.
type Options struct {
	// Addr is the address to listen on, e.g. ":10443".
	Addr string
	// Listener, when set, is served instead of listening on Addr.
	Listener net.Listener
	// CertDir holds tls.crt and tls.key, the serving certificate; changes are picked up without
	// a restart.
	CertDir string
	// GetCertificate, when set, serves the certificate instead of CertDir: the manager shares
	// one cert.Pair between its servers.
	GetCertificate func(*tls.ClientHelloInfo) (*tls.Certificate, error)
	// TLSOpts adjust the TLS configuration (minimum version, cipher suites, ALPN).
	TLSOpts []func(*tls.Config)
	// Verifier checks the callers' tokens.
	Verifier TokenVerifier
	// Applier writes the status.
	Applier StatusApplier
	// QPS and Burst are the write budget: the rate limits of the API client the Applier writes
	// through. A report beyond it waits up to 2 s, then is answered 429, rather than waiting for
	// the client's limiter until its request times out. Zero: no budget.
	QPS   float32
	Burst int

	// timeouts, when set, replace defaultTimeouts: for tests.
	timeouts *timeouts
}

// Server is a manager Runnable that runs on every replica.
type Server struct {
	opts Options
	addr atomic.Pointer[string]
}

var _ manager.LeaderElectionRunnable = (*Server)(nil)

// New returns a server; Start serves.
func New(opts Options) (*Server, error) {
	if opts.Verifier == nil || opts.Applier == nil {
		return nil, errors.New("statusserver.New: a verifier and an applier are required")
	}
	if opts.Listener == nil && opts.Addr == "" {
		return nil, errors.New("statusserver.New: an address or a listener is required")
	}
	if err := registerMetrics(); err != nil {
		return nil, err
	}
	return &Server{opts: opts}, nil
}

// Handler serves the route, without TLS: for tests and for embedding.
// Reports are limited per TrainJob, not by a write budget.
func Handler(verifier TokenVerifier, applier StatusApplier, log logr.Logger) http.Handler {
	return newHandler(verifier, applier, log, 0, 0)
}

// NeedLeaderElection is false: every replica answers the pods.
func (*Server) NeedLeaderElection() bool { return false }

// Start serves until ctx ends, then drains for up to the write timeout.
func (s *Server) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("status-server")
	getCertificate := s.opts.GetCertificate
	if getCertificate == nil {
		pair := cert.NewPair(s.opts.CertDir)
		go func() {
			if err := pair.Start(ctx); err != nil {
				log.Error(err, "Watching the status server certificate")
			}
		}()
		select {
		case <-pair.Loaded():
		case <-ctx.Done():
			return nil
		}
		getCertificate = pair.GetCertificate
	}
	cfg := &tls.Config{GetCertificate: getCertificate, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}}
	for _, o := range s.opts.TLSOpts {
		o(cfg)
	}
	ln := s.opts.Listener
	var err error
	if ln == nil {
		if ln, err = (&net.ListenConfig{}).Listen(ctx, "tcp", s.opts.Addr); err != nil {
			return fmt.Errorf("listening for status requests: %w", err)
		}
	}
	to := defaultTimeouts
	if s.opts.timeouts != nil {
		to = *s.opts.timeouts
	}
	srv := &http.Server{
		Handler:           withTimeout(newHandler(s.opts.Verifier, s.opts.Applier, log, s.opts.QPS, s.opts.Burst), to.request),
		ReadTimeout:       to.read,
		ReadHeaderTimeout: to.readHeader,
		WriteTimeout:      to.write,
		IdleTimeout:       to.idle,
		MaxHeaderBytes:    maxHeaderBytes,
		BaseContext:       func(net.Listener) context.Context { return ctx },
		// TLS handshake failures (scanners, probes closing early) are not errors of the server.
		ErrorLog: stdlog.New(logWriter{log.V(4)}, "", 0),
	}
	addr := ln.Addr().String()
	s.addr.Store(&addr)
	done := make(chan struct{})
	go func() {
		defer close(done)
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), to.write)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	log.Info("Serving TrainJob status updates", "address", addr)
	err = srv.Serve(tls.NewListener(listen(ln), cfg))
	if errors.Is(err, http.ErrServerClosed) {
		<-done
		return nil
	}
	return err
}

type logWriter struct{ log logr.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

func withTimeout(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

// Addr is the address the server listens on, once it does.
func (s *Server) Addr() string {
	if a := s.addr.Load(); a != nil {
		return *a
	}
	return ""
}

// ReadyCheck completes a TLS handshake with the server; it fails until the server serves.
func (s *Server) ReadyCheck() healthz.Checker {
	return func(req *http.Request) error {
		addr := s.Addr()
		if addr == "" {
			return errors.New("the status server is not serving yet")
		}
		return handshake(req.Context(), addr)
	}
}

// LiveCheck completes a TLS handshake with the server once it serves. Before that, while the
// certificates are being created, it passes: restarting the manager would not help.
func (s *Server) LiveCheck() healthz.Checker {
	return func(req *http.Request) error {
		addr := s.Addr()
		if addr == "" {
			return nil
		}
		return handshake(req.Context(), addr)
	}
}

func handshake(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	// The probe checks that the server completes handshakes, not who it is.
	d := &tls.Dialer{Config: &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}} //nolint:gosec // see above
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("status server TLS handshake: %w", err)
	}
	return conn.Close()
}
