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

package localrun

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"time"

	"github.com/go-logr/logr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/runtime/plugins/trainjobstatus"
	"github.com/gantry-ml/gantry/internal/statusserver"
)

// StatusEndpoint is the run's own status server: the manager's route and checks
// (internal/statusserver) on a loopback port, over TLS with a CA made for the run, accepting
// only the run's token. The training code's progress calls (the SDK's, the Hugging Face
// callback's) then work as on the cluster.
type StatusEndpoint struct {
	URL   string
	CA    string // PEM
	Token string

	ln      net.Listener
	tls     *tls.Config
	onApply func(*trainer.TrainJobTrainerStatus)
}

// NewStatusEndpoint listens on a free loopback port for the TrainJob namespace/name.
func NewStatusEndpoint(namespace, name string) (*StatusEndpoint, error) {
	caPEM, cert, err := newServingCert()
	if err != nil {
		return nil, err
	}
	token := make([]byte, 24)
	if _, err := rand.Read(token); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the status endpoint: %w", err)
	}
	return &StatusEndpoint{
		URL:   "https://" + ln.Addr().String() + trainjobstatus.Path(namespace, name),
		CA:    caPEM,
		Token: hex.EncodeToString(token),
		ln:    ln,
		tls:   &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12},
	}, nil
}

// Serve answers progress reports until ctx ends; apply receives each accepted one.
func (e *StatusEndpoint) Serve(ctx context.Context, apply func(*trainer.TrainJobTrainerStatus)) error {
	e.onApply = apply
	srv := &http.Server{
		Handler:           statusserver.Handler(e, e, logr.Discard()),
		TLSConfig:         e.tls,
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		<-ctx.Done()
		_ = srv.Close()
	}()
	if err := srv.ServeTLS(e.ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// Close stops listening (Serve not called).
func (e *StatusEndpoint) Close() error { return e.ln.Close() }

// Verify accepts the run's token only.
func (e *StatusEndpoint) Verify(_ context.Context, token, _, _ string) (time.Time, error) {
	if subtle.ConstantTimeCompare([]byte(token), []byte(e.Token)) != 1 {
		return time.Time{}, errors.New("not this run's token")
	}
	return time.Now(), nil
}

// ApplyTrainerStatus hands the report to the run.
func (e *StatusEndpoint) ApplyTrainerStatus(_ context.Context, _, _ string, _ time.Time, status *trainer.TrainJobTrainerStatus) error {
	if e.onApply != nil {
		e.onApply(status)
	}
	return nil
}

// newServingCert makes a CA for the run and a certificate for 127.0.0.1 signed by it.
func newServingCert() (string, tls.Certificate, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", tls.Certificate{}, err
	}
	now := time.Now()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "gantry run --local CA"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(7 * 24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return "", tls.Certificate{}, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return "", tls.Certificate{}, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", tls.Certificate{}, err
	}
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: now.Add(-time.Minute), NotAfter: now.Add(7 * 24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return "", tls.Certificate{}, err
	}
	caPEM := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}))
	return caPEM, tls.Certificate{Certificate: [][]byte{leafDER}, PrivateKey: key}, nil
}
