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

package testing

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rsa"
	"fmt"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
)

// SignJWT signs claims as a compact JWT with key (RS256 for RSA, ES256 for P-256 ECDSA) and the
// key ID kid, as the apiserver signs service-account tokens. Tests use it for tokens the
// apiserver would never issue: expired ones, or ones signed by the wrong key.
func SignJWT(key crypto.Signer, kid string, claims map[string]any) (string, error) {
	var alg jose.SignatureAlgorithm
	switch key.(type) {
	case *rsa.PrivateKey:
		alg = jose.RS256
	case *ecdsa.PrivateKey:
		alg = jose.ES256
	default:
		return "", fmt.Errorf("SignJWT: unsupported key type %T", key)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	return jwt.Signed(signer).Claims(claims).Serialize()
}

// JWK is the public JSON Web Key of key, as a JWKS endpoint serves it.
func JWK(key crypto.Signer, kid string) jose.JSONWebKey {
	alg := string(jose.RS256)
	if _, ok := key.(*ecdsa.PrivateKey); ok {
		alg = string(jose.ES256)
	}
	return jose.JSONWebKey{Key: key.Public(), KeyID: kid, Algorithm: alg, Use: "sig"}
}
