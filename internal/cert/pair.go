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

package cert

import (
	"context"
	"crypto/tls"
	"errors"
	"path/filepath"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Pair serves the certificate in a directory (tls.crt, tls.key) to a TLS server.
//
// The two files are replaced one at a time, by DiskSync or by whoever rotates them, so a reader
// can find a certificate beside the previous key. controller-runtime's watcher survives that once
// it has a pair (it keeps the last good one until the files agree again) but fails outright when
// its first read finds them apart, and a server started on it exits the process. Pair makes that
// first read wait until the files agree.
type Pair struct {
	dir   string
	retry time.Duration
	// tellAfter is how long the first read may wait before the reason is logged at Info.
	tellAfter time.Duration
	watcher   atomic.Pointer[certwatcher.CertWatcher]
	loaded    chan struct{}
	// failed is told of each first read that did not load, for tests.
	failed func(error)
}

var _ manager.LeaderElectionRunnable = (*Pair)(nil)

// NewPair reads tls.crt and tls.key in dir once started.
func NewPair(dir string) *Pair {
	return &Pair{dir: dir, retry: 200 * time.Millisecond, tellAfter: 30 * time.Second, loaded: make(chan struct{}), failed: func(error) {}}
}

// NeedLeaderElection is false: every replica serves.
func (*Pair) NeedLeaderElection() bool { return false }

// Dir is the directory the pair is read from.
func (p *Pair) Dir() string { return p.dir }

// Loaded is closed once a matching pair has been read.
func (p *Pair) Loaded() <-chan struct{} { return p.loaded }

// GetCertificate is the tls.Config hook; before the first pair loads, handshakes fail.
func (p *Pair) GetCertificate(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
	w := p.watcher.Load()
	if w == nil {
		return nil, errors.New("the serving certificate is not loaded yet")
	}
	return w.GetCertificate(hello)
}

// TLSOpt makes a server's tls.Config serve the pair.
func (p *Pair) TLSOpt(cfg *tls.Config) { cfg.GetCertificate = p.GetCertificate }

// Start reads the pair and then follows its changes until ctx ends.
func (p *Pair) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("serving-certificate").WithValues("dir", p.dir)
	var w *certwatcher.CertWatcher
	waited, told, since := false, false, time.Now()
	err := wait.PollUntilContextCancel(ctx, p.retry, true, func(context.Context) (bool, error) {
		var err error
		w, err = certwatcher.New(filepath.Join(p.dir, corev1.TLSCertKey), filepath.Join(p.dir, corev1.TLSPrivateKeyKey))
		if err == nil {
			return true, nil
		}
		switch {
		case !waited:
			// Usual while the rotator writes the first certificate.
			log.V(1).Info("Waiting for a matching certificate and key", "reason", err.Error())
		case !told && time.Since(since) >= p.tellAfter:
			// Not usual: said once, as the manager stays unready meanwhile.
			log.Info("Still no matching certificate and key; the webhooks and controllers wait for them", "reason", err.Error())
			told = true
		}
		waited = true
		p.failed(err)
		return false, nil
	})
	if err != nil {
		return nil // ctx ended before the files agreed: nothing was served.
	}
	p.watcher.Store(w)
	close(p.loaded)
	if waited {
		log.V(1).Info("Certificate and key loaded")
	}
	return w.Start(ctx)
}

// AllClosed returns a channel closed once every one of chans is, or never if ctx ends first.
func AllClosed(ctx context.Context, chans ...<-chan struct{}) <-chan struct{} {
	all := make(chan struct{})
	go func() {
		for _, c := range chans {
			select {
			case <-c:
			case <-ctx.Done():
				return
			}
		}
		close(all)
	}()
	return all
}
