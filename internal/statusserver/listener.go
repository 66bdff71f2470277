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

	"github.com/gantry-ml/gantry/internal/util/connlimit"
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

// listen caps ln's connections (connlimit), counting them in the server's metrics.
func listen(ln net.Listener) net.Listener {
	return connlimit.Listen(ln, connlimit.Caps{
		Max: maxConns, PerAddr: maxConnsPerAddr, Local: maxLocalConns,
		Refused: func(reason string) { connectionsRefused.WithLabelValues(reason).Inc() },
		Opened:  func(delta int) { openConnections.Add(float64(delta)) },
	})
}
