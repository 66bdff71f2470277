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
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"k8s.io/client-go/rest"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// fakeIssuer serves an apiserver's discovery document and keys.
type fakeIssuer struct {
	*httptest.Server
	issuer     string
	keys       jose.JSONWebKeySet
	jwksserved atomic.Int32
}

func newFakeIssuer(t *testing.T, keys ...jose.JSONWebKey) *fakeIssuer {
	t.Helper()
	f := &fakeIssuer{issuer: "https://kubernetes.default.svc.cluster.local", keys: jose.JSONWebKeySet{Keys: keys}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		_ = json.NewEncoder(w).Encode(map[string]any{
			"issuer": f.issuer, "jwks_uri": "https://unreachable.invalid/openid/v1/jwks",
			"id_token_signing_alg_values_supported": []string{"RS256", "ES256"},
		})
	})
	mux.HandleFunc("GET /openid/v1/jwks", func(w http.ResponseWriter, _ *http.Request) {
		f.jwksserved.Add(1)
		_ = json.NewEncoder(w).Encode(f.keys)
	})
	f.Server = httptest.NewTLSServer(mux)
	t.Cleanup(f.Close)
	return f
}

func (f *fakeIssuer) verifier(t *testing.T, now time.Time) *OIDCVerifier {
	t.Helper()
	cfg := &rest.Config{Host: f.URL, TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	v, err := NewOIDCVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	v.now = func() time.Time { return now }
	if err := v.discover(context.Background()); err != nil {
		t.Fatal(err)
	}
	return v
}

func TestOIDCVerifier(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	forger, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	issuer := newFakeIssuer(t, utiltesting.JWK(rsaKey, "rsa"), utiltesting.JWK(ecKey, "ec"))
	now := time.Unix(1_800_000_000, 0)
	const aud = "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status"
	claims := func(change func(map[string]any)) map[string]any {
		c := map[string]any{
			"iss": issuer.issuer, "aud": []string{aud}, "sub": "system:serviceaccount:ns:default",
			"iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(),
			"kubernetes.io": map[string]any{"namespace": "ns", "serviceaccount": map[string]any{"name": "default", "uid": "u"}},
		}
		if change != nil {
			change(c)
		}
		return c
	}
	cases := map[string]struct {
		key     crypto.Signer
		kid     string
		claims  map[string]any
		raw     string
		wantErr string
	}{
		"RS256, the right audience and namespace": {key: rsaKey, kid: "rsa", claims: claims(nil)},
		"ES256": {key: ecKey, kid: "ec", claims: claims(nil)},
		"audience of another TrainJob": {key: rsaKey, kid: "rsa",
			claims: claims(func(c map[string]any) {
				c["aud"] = []string{"trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/other/status"}
			}),
			wantErr: "expected audience"},
		"the API audience": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { c["aud"] = []string{"https://kubernetes.default.svc"} }),
			wantErr: "expected audience"},
		"this audience and another": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { c["aud"] = []string{aud, "https://kubernetes.default.svc"} }),
			wantErr: "the token has 2 audiences"},
		"another namespace": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { c["kubernetes.io"] = map[string]any{"namespace": "other"} }),
			wantErr: `the token was issued in namespace "other", not "ns"`},
		"no namespace claim": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { delete(c, "kubernetes.io") }),
			wantErr: `the token was issued in namespace "", not "ns"`},
		"expired": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { c["exp"] = now.Add(-time.Second).Unix() }),
			wantErr: "oidc: token is expired"},
		"another issuer": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { c["iss"] = "https://evil.example" }),
			wantErr: "id token issued by a different provider"},
		"signed by another key under a known kid": {key: forger, kid: "ec", claims: claims(nil),
			wantErr: "failed to verify signature"},
		"signed by an unknown key": {key: forger, kid: "mine", claims: claims(nil),
			wantErr: "failed to verify signature"},
		"not a JWT": {raw: "not-a-jwt", wantErr: "malformed jwt"},
		"no issue time": {key: rsaKey, kid: "rsa",
			claims:  claims(func(c map[string]any) { delete(c, "iat") }),
			wantErr: "the token has no issue time (iat)"},
	}
	v := issuer.verifier(t, now)
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			token := tc.raw
			if token == "" {
				var err error
				if token, err = utiltesting.SignJWT(tc.key, tc.kid, tc.claims); err != nil {
					t.Fatal(err)
				}
			}
			issuedAt, err := v.Verify(context.Background(), token, aud, "ns")
			got := ""
			if err != nil {
				got = err.Error()
			}
			if tc.wantErr == "" && got != "" || !strings.Contains(got, tc.wantErr) {
				t.Errorf("Verify() error = %q, want one containing %q", got, tc.wantErr)
			}
			if want := now.Add(-time.Minute); err == nil && !issuedAt.Equal(want) {
				t.Errorf("Verify() issued at %v, want %v", issuedAt, want)
			}
		})
	}
	// The key set is cached: only tokens signed by unknown keys made the verifier look again,
	// and those few lookups were rate limited.
	if n := issuer.jwksserved.Load(); n < 1 || n > 4 {
		t.Errorf("the keys were fetched %d times, want between 1 and 4", n)
	}
}

func TestOIDCVerifierNotReady(t *testing.T) {
	v, err := NewOIDCVerifier(&rest.Config{Host: "https://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.Verify(context.Background(), "t", "a", "ns"); !errors.Is(err, ErrVerifierNotReady) {
		t.Errorf("Verify() before discovery = %v, want ErrVerifierNotReady", err)
	}
}
