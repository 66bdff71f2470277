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
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// Certificates live ten years; `up` renews any with less than renewBefore left. The in-process
// rotators of the Gantry manager and Kueue replace a certificate that expires within 90 days, so
// renewBefore must be longer for them to keep the one `up` seeded.
const (
	certValidity = 10 * 365 * 24 * time.Hour
	renewBefore  = 180 * 24 * time.Hour
)

// keyPair is a PEM certificate and its PEM private key.
type keyPair struct {
	CertPEM, KeyPEM []byte
	cert            *x509.Certificate
	key             *rsa.PrivateKey
}

// certSpec describes one certificate of the cluster's PKI.
type certSpec struct {
	// File is the base name under pki/: <File>.crt and <File>.key.
	File string
	// CommonName doubles as a DNS name for CAs: cert-controller checks that a CA it is handed
	// verifies for its CAName.
	CommonName string
	DNSNames   []string
	IPs        []net.IP
	CA         bool
}

// loopbackSANs are the names every serving certificate carries: components are reached on
// 127.0.0.1.
var loopbackSANs = certSpec{DNSNames: []string{"localhost"}, IPs: []net.IP{net.IPv4(127, 0, 0, 1)}}

// ensureCA loads the CA at pki/<spec.File> or creates it, and renews it when it nears its end.
func ensureCA(dir string, spec certSpec) (*keyPair, error) {
	spec.CA = true
	if kp, err := loadKeyPair(dir, spec.File); err == nil && fresh(kp.cert) && verifiesAs(kp.cert, kp.cert, spec) {
		return kp, nil
	}
	kp, err := newKeyPair(spec, nil)
	if err != nil {
		return nil, err
	}
	return kp, kp.write(dir, spec.File)
}

// ensureServing loads the serving certificate pki/<spec.File> or issues it from ca when missing,
// near its end, signed by another CA, or lacking one of spec's names.
func ensureServing(dir string, ca *keyPair, spec certSpec) (*keyPair, error) {
	if kp, err := loadKeyPair(dir, spec.File); err == nil && fresh(kp.cert) && verifiesAs(kp.cert, ca.cert, spec) {
		return kp, nil
	}
	kp, err := newKeyPair(spec, ca)
	if err != nil {
		return nil, err
	}
	return kp, kp.write(dir, spec.File)
}

func fresh(c *x509.Certificate) bool { return time.Until(c.NotAfter) > renewBefore }

// verifiesAs reports whether cert chains to ca for every name and IP of spec.
func verifiesAs(cert, ca *x509.Certificate, spec certSpec) bool {
	roots := x509.NewCertPool()
	roots.AddCert(ca)
	names := append([]string{}, spec.DNSNames...)
	if spec.CA {
		names = append(names, spec.CommonName)
	}
	for _, ip := range spec.IPs {
		names = append(names, ip.String())
	}
	if len(names) == 0 {
		// A client certificate: only the chain is checked.
		names = []string{""}
	}
	for _, n := range names {
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: n, Roots: roots}); err != nil {
			return false
		}
	}
	return true
}

func newKeyPair(spec certSpec, ca *keyPair) (*keyPair, error) {
	// RSA in PKCS#1 PEM: cert-controller, which may be handed these keys, reads only that form.
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 126))
	if err != nil {
		return nil, err
	}
	now := time.Now()
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: spec.CommonName, Organization: []string{"gantry-local-cluster"}},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(certValidity),
		DNSNames:     spec.DNSNames,
		IPAddresses:  spec.IPs,
	}
	parent, signer := tmpl, key
	if spec.CA {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		tmpl.DNSNames = append(tmpl.DNSNames, spec.CommonName)
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		parent, signer = ca.cert, ca.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		return nil, fmt.Errorf("issuing %s: %w", spec.CommonName, err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, err
	}
	return &keyPair{
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
		cert:    cert,
		key:     key,
	}, nil
}

func (kp *keyPair) write(dir, file string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, file+".key"), kp.KeyPEM, 0o600); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, file+".crt"), kp.CertPEM, 0o644)
}

func loadKeyPair(dir, file string) (*keyPair, error) {
	certPEM, err := os.ReadFile(filepath.Join(dir, file+".crt"))
	if err != nil {
		return nil, err
	}
	keyPEM, err := os.ReadFile(filepath.Join(dir, file+".key"))
	if err != nil {
		return nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, errors.New("not PEM")
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, err
	}
	key, err := x509.ParsePKCS1PrivateKey(kb.Bytes)
	if err != nil {
		return nil, err
	}
	return &keyPair{CertPEM: certPEM, KeyPEM: keyPEM, cert: cert, key: key}, nil
}

// ensureServiceAccountKey writes the RSA key pair the apiserver signs and checks service account
// tokens with.
func ensureServiceAccountKey(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, "sa.key")); err == nil {
		return nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(filepath.Join(dir, "sa.pub"), pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o644); err != nil {
		return err
	}
	return writeFileAtomic(filepath.Join(dir, "sa.key"),
		pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}), 0o600)
}

// ensureToken returns the administrator bearer token, creating it once.
func ensureToken(dir string) (string, error) {
	path := filepath.Join(dir, "admin.token")
	if data, err := os.ReadFile(path); err == nil && len(data) > 0 {
		return string(data), nil
	}
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := fmt.Sprintf("%x", b)
	if err := writeFileAtomic(path, []byte(token), 0o600); err != nil {
		return "", err
	}
	return token, nil
}

func writeFileAtomic(path string, data []byte, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, mode); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
