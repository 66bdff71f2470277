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

package metrics

import (
	"crypto/tls"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

// The counter tells a client that reuses its connection (one handshake for many requests) from
// one that does not (a handshake per request), and keeps a GetConfigForClient set before it.
func TestCountHandshakes(t *testing.T) {
	for _, tc := range []struct {
		name           string
		keepAlive      bool
		wantHandshakes float64
	}{
		{name: "connection reused", keepAlive: true, wantHandshakes: 1},
		{name: "a connection per request", keepAlive: false, wantHandshakes: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: "handshakes"})
			var earlier atomic.Int32
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			srv.TLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { earlier.Add(1); return nil, nil }}
			CountHandshakes(c)(srv.TLS)
			srv.StartTLS()
			defer srv.Close()
			client := srv.Client()
			client.Transport.(*http.Transport).DisableKeepAlives = !tc.keepAlive
			for range 3 {
				resp, err := client.Get(srv.URL)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			got := map[string]float64{"counted": testutil.ToFloat64(c), "earlier hook": float64(earlier.Load())}
			want := map[string]float64{"counted": tc.wantHandshakes, "earlier hook": tc.wantHandshakes}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("handshakes (-want,+got):\n%s", diff)
			}
		})
	}
}
