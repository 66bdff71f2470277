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

package connlimit

import (
	"net"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// fakeListener hands out one connection per address in order, then fails.
type fakeListener struct {
	net.Listener
	addrs []string
}

func (l *fakeListener) Accept() (net.Conn, error) {
	if len(l.addrs) == 0 {
		return nil, net.ErrClosed
	}
	a := l.addrs[0]
	l.addrs = l.addrs[1:]
	server, client := net.Pipe()
	_ = client.Close()
	return &addrConn{Conn: server, addr: &net.TCPAddr{IP: net.ParseIP(a), Port: 1}}, nil
}

type addrConn struct {
	net.Conn
	addr net.Addr
}

func (c *addrConn) RemoteAddr() net.Addr { return c.addr }

// TestListen: each client address within its cap, all within the total, the loopback apart when
// it has slots of its own; every refusal named, every slot given back on Close.
func TestListen(t *testing.T) {
	cases := map[string]struct {
		caps        Caps
		addrs       []string
		wantOK      []string
		wantRefused []string
	}{
		"per address": {caps: Caps{Max: 10, PerAddr: 2}, addrs: []string{"10.0.0.1", "10.0.0.1", "10.0.0.1", "10.0.0.2"},
			wantOK: []string{"10.0.0.1", "10.0.0.1", "10.0.0.2"}, wantRefused: []string{Address}},
		"in all": {caps: Caps{Max: 2, PerAddr: 2}, addrs: []string{"10.0.0.1", "10.0.0.2", "10.0.0.3"},
			wantOK: []string{"10.0.0.1", "10.0.0.2"}, wantRefused: []string{Total}},
		"the loopback apart from a full server": {caps: Caps{Max: 1, PerAddr: 1, Local: 1},
			addrs:  []string{"10.0.0.1", "127.0.0.1", "127.0.0.1", "127.0.0.2"},
			wantOK: []string{"10.0.0.1", "127.0.0.1"}, wantRefused: []string{Local, Total}},
		"the loopback a client like any other without slots of its own": {caps: Caps{Max: 5, PerAddr: 1},
			addrs: []string{"127.0.0.1", "127.0.0.1"}, wantOK: []string{"127.0.0.1"}, wantRefused: []string{Address}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			var refused []string
			open := 0
			caps := tc.caps
			caps.Refused = func(r string) { refused = append(refused, r) }
			caps.Opened = func(d int) { open += d }
			ln := Listen(&fakeListener{addrs: tc.addrs}, caps)
			var ok []string
			var conns []net.Conn
			for {
				c, err := ln.Accept()
				if err != nil {
					break
				}
				ok = append(ok, RemoteAddr(c).String())
				conns = append(conns, c)
			}
			if diff := cmp.Diff(tc.wantOK, ok); diff != "" {
				t.Errorf("accepted (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantRefused, refused); diff != "" {
				t.Errorf("refused (-want +got):\n%s", diff)
			}
			for _, c := range conns {
				_ = c.Close()
				_ = c.Close() // a second Close gives nothing back twice
			}
			if open != 0 {
				t.Errorf("%d connections still counted open after every Close", open)
			}
			l := ln.(*listener)
			if l.open != 0 || l.locals != 0 || len(l.byAddr) != 0 {
				t.Errorf("slots held after every Close: %d open, %d loopback, %v", l.open, l.locals, l.byAddr)
			}
		})
	}
}
