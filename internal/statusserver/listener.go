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
	"net"
	"net/netip"
	"sync"
)

// Connection caps. The server shares the manager's process and memory limit (512 MiB) with the
// webhooks and controllers: an idle keep-alive TLS connection costs it about 50 KiB resident
// (TestHostileLoad), so 1,024 cost about 50 MiB, while hundreds of reporting TrainJobs need one
// each. One address may hold 32, a thirty-second of them: with 128 (an eighth), 8 pods opening
// connections and leaving them idle held every slot and reporters were refused (issue 34); now
// that takes 32 addresses, and each pays for it by reconnecting every 5 s (the handshake and
// header timeout) since a refused request closes its connection. 32 still fits the reporting
// processes of a node seen from the node's address (host network, SNAT). The manager's probes
// come from the loopback address and have slots of their own: a full server stays live and
// ready, and its pod keeps serving webhooks.
const (
	maxConns        = 1024
	maxConnsPerAddr = 32
	maxLocalConns   = 64
)

// capListener hands out connections within the caps and closes any beyond them at once, with a
// reset, before any TLS work. Queueing them instead (netutil.LimitListener) would leave clients
// hanging for as long as the slots stay taken, inside the training loop that reports, and would
// fill the kernel's accept queue; a closed connection is a fast failure the client retries at
// its next report.
type capListener struct {
	net.Listener
	max, perAddr, local int

	mu     sync.Mutex
	open   int
	locals int
	byAddr map[netip.Addr]int
}

func newCapListener(ln net.Listener, max, perAddr, local int) *capListener {
	return &capListener{Listener: ln, max: max, perAddr: perAddr, local: local, byAddr: map[netip.Addr]int{}}
}

// Accept returns the next connection within the caps.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := remoteAddr(c)
		if reason := l.take(addr); reason != "" {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset: no FIN handshake, no TIME_WAIT kept for it
			}
			_ = c.Close()
			connectionsRefused.WithLabelValues(reason).Inc()
			continue
		}
		openConnections.Inc()
		return &slotConn{Conn: c, release: func() { l.give(addr) }}, nil
	}
}

// take reserves a slot for addr, or names the cap that is full.
func (l *capListener) take(addr netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if isLocal(addr) {
		if l.locals >= l.local {
			return "local"
		}
		l.locals++
		return ""
	}
	switch {
	case l.open >= l.max:
		return "total"
	case l.byAddr[addr] >= l.perAddr:
		return "address"
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *capListener) give(addr netip.Addr) {
	openConnections.Dec()
	l.mu.Lock()
	defer l.mu.Unlock()
	if isLocal(addr) {
		l.locals--
		return
	}
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// isLocal: the manager's own probes dial the server's address, which from inside its pod is the
// loopback. Only these two addresses, so that tests can act as remote clients from 127.0.0.2 on.
func isLocal(addr netip.Addr) bool {
	return addr == localIPv4 || addr == netip.IPv6Loopback()
}

var localIPv4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// remoteAddr is the client's IP (IPv4 unmapped), or the zero Addr when the connection has none.
func remoteAddr(c net.Conn) netip.Addr {
	ap, err := netip.ParseAddrPort(c.RemoteAddr().String())
	if err != nil {
		return netip.Addr{}
	}
	return ap.Addr().Unmap()
}

// slotConn gives its slot back when it is first closed.
type slotConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *slotConn) Close() error {
	c.once.Do(c.release)
	return c.Conn.Close()
}
