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

package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// apiClient is what the sender needs of the apiserver: a token for a pod's ServiceAccount and
// the CA ConfigMap. An interface, so the unit tests need no apiserver.
type apiClient interface {
	CreateToken(ctx context.Context, namespace, serviceAccount string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
	GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error)
}

// sender posts reports as a pod's training code would, with the caches a kubelet keeps: a
// token per pod until 80% of its lifetime (when the kubelet renews a projected token), and the
// CA, read again after caTTL (the kubelet refreshes projected ConfigMaps about every minute).
type sender struct {
	api   apiClient
	now   func() time.Time
	caTTL time.Duration

	mu      sync.Mutex
	tokens  map[string]cachedToken // pod UID
	cas     map[string]cachedCA    // namespace/name/key
	clients map[string]*http.Client
}

type cachedToken struct {
	token   string
	renewAt time.Time
}

type cachedCA struct {
	pem     string
	fetched time.Time
}

func newSender(api apiClient) *sender {
	return &sender{
		api: api, now: time.Now, caTTL: 30 * time.Second,
		tokens: map[string]cachedToken{}, cas: map[string]cachedCA{}, clients: map[string]*http.Client{},
	}
}

// result of one report: the HTTP code, and for a 429 how long the server asked to wait.
type result struct {
	code       int
	retryAfter time.Duration
	body       string
}

// send posts status for the target.
func (s *sender) send(ctx context.Context, t *target, status *trainer.TrainJobTrainerStatus) (result, error) {
	token, err := s.token(ctx, t)
	if err != nil {
		return result{}, fmt.Errorf("requesting a token for ServiceAccount %s/%s: %w", t.namespace, t.serviceAccount, err)
	}
	hc, err := s.client(ctx, t)
	if err != nil {
		return result{}, err
	}
	body, err := json.Marshal(trainer.UpdateTrainJobStatusRequest{TrainerStatus: status})
	if err != nil {
		return result{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return result{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return result{}, err
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	r := result{code: resp.StatusCode, body: strings.TrimSpace(string(data))}
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		secs, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		r.retryAfter = time.Duration(max(1, secs)) * time.Second
	case http.StatusForbidden:
		// A token the server refuses (stale: issued before a TrainJob of the same name was
		// created) is not sent again.
		s.mu.Lock()
		delete(s.tokens, t.podUID)
		s.mu.Unlock()
	}
	return r, nil
}

// token is the pod's token, requested as the kubelet does for a projected volume: for the
// pod's ServiceAccount, the projection's audience and lifetime, bound to the pod.
func (s *sender) token(ctx context.Context, t *target) (string, error) {
	now := s.now()
	s.mu.Lock()
	c, ok := s.tokens[t.podUID]
	s.mu.Unlock()
	if ok && now.Before(c.renewAt) {
		return c.token, nil
	}
	tr, err := s.api.CreateToken(ctx, t.namespace, t.serviceAccount, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         []string{t.audience},
			ExpirationSeconds: &t.expirationSeconds,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{Kind: "Pod", APIVersion: "v1", Name: t.pod, UID: types.UID(t.podUID)},
		},
	})
	if err != nil {
		return "", err
	}
	lifetime := time.Duration(t.expirationSeconds) * time.Second
	if !tr.Status.ExpirationTimestamp.IsZero() {
		lifetime = tr.Status.ExpirationTimestamp.Sub(now)
	}
	s.mu.Lock()
	s.tokens[t.podUID] = cachedToken{token: tr.Status.Token, renewAt: now.Add(lifetime * 8 / 10)}
	s.mu.Unlock()
	return tr.Status.Token, nil
}

// client is an HTTPS client trusting the CA the pod would read, one per CA.
func (s *sender) client(ctx context.Context, t *target) (*http.Client, error) {
	key := t.namespace + "/" + t.caConfigMap + "/" + t.caKey
	now := s.now()
	s.mu.Lock()
	ca, ok := s.cas[key]
	s.mu.Unlock()
	if !ok || now.Sub(ca.fetched) >= s.caTTL {
		cm, err := s.api.GetConfigMap(ctx, t.namespace, t.caConfigMap)
		if err != nil {
			return nil, fmt.Errorf("reading the CA ConfigMap %s/%s: %w", t.namespace, t.caConfigMap, err)
		}
		ca = cachedCA{pem: cm.Data[t.caKey], fetched: now}
		s.mu.Lock()
		s.cas[key] = ca
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if hc, ok := s.clients[ca.pem]; ok {
		return hc, nil
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM([]byte(ca.pem)) {
		return nil, fmt.Errorf("the CA ConfigMap %s/%s holds no certificate under %s", t.namespace, t.caConfigMap, t.caKey)
	}
	hc := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12},
		IdleConnTimeout: 20 * time.Second,
	}}
	s.clients[ca.pem] = hc
	return hc, nil
}

// forget drops the tokens of pods no longer running.
func (s *sender) forget(running map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for uid := range s.tokens {
		if !running[uid] {
			delete(s.tokens, uid)
		}
	}
}

var errNoToken = errors.New("the TokenRequest returned no token")

// kubeAPI is apiClient over a clientset.
type kubeAPI struct{ cs kubernetes.Interface }

func (k kubeAPI) CreateToken(ctx context.Context, namespace, sa string, tr *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	out, err := k.cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, tr, metav1.CreateOptions{})
	if err == nil && out.Status.Token == "" {
		return nil, errNoToken
	}
	return out, err
}

func (k kubeAPI) GetConfigMap(ctx context.Context, namespace, name string) (*corev1.ConfigMap, error) {
	return k.cs.CoreV1().ConfigMaps(namespace).Get(ctx, name, metav1.GetOptions{})
}
