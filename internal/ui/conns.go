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
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/gantry-ml/gantry/internal/util/connlimit"
)

// connLimits are the HTTP server's timeouts and connection caps; tests shorten them.
type connLimits struct {
	readHeader, read, write, idle time.Duration
	maxConns, perAddr             int
}

// defaultConnLimits: a browser sends a request's headers at once and keeps a connection for its
// next clicks, so one that sends nothing for 10 s, or stays idle a minute, is closed (issue 34:
// every idle connection was held for ever, 2,000 of 2,000 after one 401). Pages take
// milliseconds to write; live streams lift the read deadline and push the write deadline
// forward at each event (streamWriteTimeout). An idle connection costs the server about 20 KiB
// (two 4 KiB buffers and a goroutine), so 1,024 cost about 20 MiB of the 128 MiB limit; one
// address holds 256 by default (--max-client-connections), since a proxy in front of the UI
// is one address for all its users and each live stream holds a connection.
var defaultConnLimits = connLimits{
	readHeader: 10 * time.Second, read: 30 * time.Second, write: time.Minute, idle: time.Minute,
	maxConns: 1024, perAddr: DefaultMaxClientConnections,
}

// DefaultMaxClientConnections is --max-client-connections' default.
const DefaultMaxClientConnections = 256

// maxHeaderBytes: a bearer token is 1 to 2 KiB, a session cookie 64 bytes.
const maxHeaderBytes = 32 << 10

// server is the http.Server of h within the limits.
func (l connLimits) server(h http.Handler) *http.Server {
	return &http.Server{
		Handler: h, ReadHeaderTimeout: l.readHeader, ReadTimeout: l.read, WriteTimeout: l.write,
		IdleTimeout: l.idle, MaxHeaderBytes: maxHeaderBytes,
	}
}

// listen caps ln's connections: in all and per client address (connlimit). The loopback address
// has no slots of its own: in kubeconfig mode every client is on it.
func (l connLimits) listen(ln net.Listener) net.Listener {
	return connlimit.Listen(ln, connlimit.Caps{Max: l.maxConns, PerAddr: l.perAddr})
}

// closeRefused closes the connection after any refused request (401, 403, 429, ...): a client
// repeating bad logins would otherwise keep its connection for the idle timeout.
func closeRefused(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&refusalCloser{ResponseWriter: w}, r)
	})
}

type refusalCloser struct{ http.ResponseWriter }

func (c *refusalCloser) WriteHeader(code int) {
	if code >= http.StatusBadRequest {
		c.Header().Set("Connection", "close")
	}
	c.ResponseWriter.WriteHeader(code)
}

// Flush and Unwrap keep the live streams working through the wrapper (http.ResponseController).
func (c *refusalCloser) Flush()                      { c.ResponseWriter.(http.Flusher).Flush() }
func (c *refusalCloser) Unwrap() http.ResponseWriter { return c.ResponseWriter }

// maxStreamsPerUser: each live stream holds a connection, a goroutine and a subscription to every
// change, so one user (or one stolen token) may hold 8 at once: more than the 6 connections a
// browser opens to one host over HTTP/1.1.
const maxStreamsPerUser = 8

// limitStreams refuses a user's stream beyond maxStreamsPerUser with 429 and says why.
func (s *Server) limitStreams(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := ""
		if u := UserFrom(r.Context()); u != nil {
			name = u.Name
		}
		if !s.takeStream(name) {
			who := "you have"
			if name != "" {
				who = fmt.Sprintf("user %q has", name)
			}
			http.Error(w, fmt.Sprintf("%s %d live streams open, the most one user may: close a tab of the UI (or wait for a log stream to end) and reload",
				who, maxStreamsPerUser), http.StatusTooManyRequests)
			return
		}
		defer s.giveStream(name)
		h.ServeHTTP(w, r)
	})
}

func (s *Server) takeStream(user string) bool {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streams == nil {
		s.streams = map[string]int{}
	}
	if s.streams[user] >= maxStreamsPerUser {
		return false
	}
	s.streams[user]++
	return true
}

func (s *Server) giveStream(user string) {
	s.streamsMu.Lock()
	defer s.streamsMu.Unlock()
	if s.streams[user]--; s.streams[user] <= 0 {
		delete(s.streams, user)
	}
}

// streamWriteTimeout bounds each write of a live stream: a client that stops reading is dropped
// within it, while a stream writes at least a heartbeat every 25 s.
const streamWriteTimeout = time.Minute

// holdOpen lifts the server's read deadline from a stream's connection (a stream reads nothing,
// and the deadline would end it) and gives its next write streamWriteTimeout.
func holdOpen(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	_ = rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout))
}
