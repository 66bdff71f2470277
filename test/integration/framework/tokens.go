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
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// ServiceAccountSigningKey is the key the apiserver signs service-account tokens with (envtest
// writes it next to its certificates and passes --service-account-signing-key-file). Tests sign
// tokens with it that the apiserver would never issue, such as expired ones.
func (f *Framework) ServiceAccountSigningKey() (crypto.Signer, error) {
	if f.env == nil || f.env.ControlPlane.APIServer == nil {
		return nil, errors.New("the control plane is not started")
	}
	data, err := os.ReadFile(filepath.Join(f.env.ControlPlane.APIServer.CertDir, "sa-signer.key"))
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(data)
	if block == nil {
		return nil, errors.New("sa-signer.key holds no PEM block")
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, err
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("sa-signer.key holds a %T", key)
	}
	return signer, nil
}

// RequestToken asks the apiserver for a token of the service account namespace/name (created if
// missing) with the audiences, valid for seconds, through the TokenRequest API the kubelet uses
// for projected tokens.
func (f *Framework) RequestToken(ctx context.Context, namespace, name string, seconds int64, audiences ...string) (string, error) {
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := f.Client.Create(ctx, sa); client.IgnoreAlreadyExists(err) != nil {
		return "", err
	}
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: audiences, ExpirationSeconds: ptr.To(seconds),
	}}
	if err := f.Client.SubResource("token").Create(ctx, sa, req); err != nil {
		return "", fmt.Errorf("requesting a token for %s/%s: %w", namespace, name, err)
	}
	return req.Status.Token, nil
}
