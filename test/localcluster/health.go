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

package localcluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// probe is one component's health endpoint.
type probe struct {
	url string
	// roots verifies the serving certificate; nil with an https url skips verification (the
	// controller-manager and scheduler serve self-signed certificates they generate).
	roots *x509.CertPool
	token string
}

func (p probe) String() string { return p.url }

// check makes one request; any answer but 200 is an error carrying the body's first line.
func (p probe) check(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.url, nil)
	if err != nil {
		return err
	}
	if p.token != "" {
		req.Header.Set("Authorization", "Bearer "+p.token)
	}
	// Verification is skipped only for the self-signed health endpoints of local processes.
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: p.roots, InsecureSkipVerify: p.roots == nil}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		return err
	}
	defer func() { _ = resp.Body.Close() }()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		line, _, _ := strings.Cut(strings.TrimSpace(string(body)), "\n")
		return fmt.Errorf("HTTP %d: %s", resp.StatusCode, line)
	}
	return nil
}
