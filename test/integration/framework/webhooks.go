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

package framework

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/gantry-ml/gantry/pkg/testkit"
)

// WebhookInstallOptions installs the webhook configurations exactly as config/webhook builds them
// (names, object selectors); envtest points them at the test's webhook server. They are the test
// kit's copies, which `make manifests` writes and `make verify` keeps current.
func WebhookInstallOptions() (envtest.WebhookInstallOptions, error) {
	return testkit.WebhookInstallOptions()
}

// webhookServer serves on the address and certificates envtest registered.
func (f *Framework) webhookServer() webhook.Server {
	o := f.env.WebhookInstallOptions
	return webhook.NewServer(webhook.Options{Host: o.LocalServingHost, Port: o.LocalServingPort, CertDir: o.LocalServingCertDir})
}

// waitForWebhooks blocks until the webhook server accepts TLS connections.
func (f *Framework) waitForWebhooks() error {
	o := f.env.WebhookInstallOptions
	addr := net.JoinHostPort(o.LocalServingHost, strconv.Itoa(o.LocalServingPort))
	dialer := &net.Dialer{Timeout: time.Second}
	err := wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		conn, err := tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true}) //nolint:gosec // probing the test's own server
		if err != nil {
			return false, nil
		}
		return true, conn.Close()
	})
	if err != nil {
		return fmt.Errorf("webhook server at %s not ready: %w", addr, err)
	}
	return nil
}
