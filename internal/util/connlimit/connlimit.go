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

// Package connlimit caps a server's connections, in all and per client address, for the servers
// someone else can reach (the status server, the web UI): one client must not take every slot.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
)

// Reasons a connection is refused, as Caps.Refused is told.
const (
	Total   = "total"
	Address = "address"
	Local   = "local"
)

// Caps are a listener's limits.
type Caps struct {
	// Max is the connections open at once in all; PerAddr those of one client address.
	Max, PerAddr int
	// Local, when above 0, gives the loopback address (127.0.0.1, ::1) slots of its own, apart
	// from Max: a server's own probes then get through when clients hold every slot. At 0 the
	// loopback address is a client like any other.
	Local int
	// Refused, when set, is told each refusal's reason; Opened each change of the connections
	// open (+1, -1), loopback ones included.
	Refused func(reason string)
	Opened  func(delta int)
}

// Listen hands out ln's connections within caps and closes any beyond them at once, with a
// reset, before any TLS work: queueing them instead (netutil.LimitListener) would leave clients
// hanging for as long as the slots stay taken and fill the kernel's accept queue, where a
// closed connection is a fast failure the client retries.
func Listen(ln net.Listener, caps Caps) net.Listener {
	return &listener{Listener: ln, caps: caps, byAddr: map[netip.Addr]int{}}
}

type listener struct {
	net.Listener
	caps Caps

	mu     sync.Mutex
	open   int
	locals int
	byAddr map[netip.Addr]int
}

// Accept returns the next connection within the caps.
func (l *listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		addr := RemoteAddr(c)
		if reason := l.take(addr); reason != "" {
			if tc, ok := c.(*net.TCPConn); ok {
				_ = tc.SetLinger(0) // a reset: no FIN handshake, no TIME_WAIT kept for it
			}
			_ = c.Close()
			if l.caps.Refused != nil {
				l.caps.Refused(reason)
			}
			continue
		}
		l.opened(1)
		return &slotConn{Conn: c, release: func() { l.give(addr) }}, nil
	}
}

func (l *listener) opened(delta int) {
	if l.caps.Opened != nil {
		l.caps.Opened(delta)
	}
}

// take reserves a slot for addr, or names the cap that is full.
func (l *listener) take(addr netip.Addr) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.caps.Local > 0 && IsLoopback(addr) {
		if l.locals >= l.caps.Local {
			return Local
		}
		l.locals++
		return ""
	}
	switch {
	case l.open >= l.caps.Max:
		return Total
	case l.byAddr[addr] >= l.caps.PerAddr:
		return Address
	}
	l.open++
	l.byAddr[addr]++
	return ""
}

func (l *listener) give(addr netip.Addr) {
	l.opened(-1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.caps.Local > 0 && IsLoopback(addr) {
		l.locals--
		return
	}
	l.open--
	if l.byAddr[addr]--; l.byAddr[addr] <= 0 {
		delete(l.byAddr, addr)
	}
}

// IsLoopback reports the two loopback addresses a server's own probes come from; only these two,
// so that tests can act as remote clients from 127.0.0.2 on.
func IsLoopback(addr netip.Addr) bool {
	return addr == localIPv4 || addr == netip.IPv6Loopback()
}

var localIPv4 = netip.AddrFrom4([4]byte{127, 0, 0, 1})

// RemoteAddr is the client's IP (IPv4 unmapped), or the zero Addr when the connection has none.
func RemoteAddr(c net.Conn) netip.Addr {
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
