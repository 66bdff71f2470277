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
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// The apiserver's service-account issuer discovery (KEP-1393). Every service account may read
// both through the default system:service-account-issuer-discovery binding, so the manager needs
// no extra RBAC.
const (
	discoveryPath = "/.well-known/openid-configuration"
	jwksPath      = "/openid/v1/jwks"
	// rediscoverEvery re-reads the issuer, which changes only when the apiserver is reconfigured.
	rediscoverEvery = 10 * time.Minute
)

// OIDCVerifier verifies service-account tokens with go-oidc against the issuer and signing keys
// the apiserver publishes. Both are read through the manager's own authenticated connection to
// the apiserver, not from the issuer URL, which is often not reachable from inside the cluster
// (and is not served at all by a test apiserver).
type OIDCVerifier struct {
	base   string
	client *http.Client
	jwks   *http.Client
	state  atomic.Pointer[verifierState]
	// now is the clock tokens' expiry is checked against.
	now func() time.Time
}

type verifierState struct {
	issuer string
	keys   oidc.KeySet
	algs   []string
}

var _ manager.LeaderElectionRunnable = (*OIDCVerifier)(nil)

// NewOIDCVerifier returns a verifier reaching the apiserver of cfg. It refuses every token with
// ErrVerifierNotReady until Start has read the issuer.
func NewOIDCVerifier(cfg *rest.Config) (*OIDCVerifier, error) {
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("creating the token verifier's client: %w", err)
	}
	base, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, err
	}
	// A token signed by an unknown key makes go-oidc fetch the keys again; a flood of forged
	// tokens must not become a flood of requests to the apiserver.
	jwks := &http.Client{Transport: &limited{next: hc.Transport, limiter: flowcontrol.NewTokenBucketRateLimiter(1, 2)}, Timeout: 10 * time.Second}
	return &OIDCVerifier{base: strings.TrimSuffix(base.String(), "/"), client: hc, jwks: jwks, now: time.Now}, nil
}

// NeedLeaderElection is false: every replica serves status requests.
func (*OIDCVerifier) NeedLeaderElection() bool { return false }

// Start reads the issuer, retrying with backoff, then again every few minutes, until ctx ends.
func (v *OIDCVerifier) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("status-server")
	backoff := wait.Backoff{Duration: time.Second, Factor: 2, Cap: 30 * time.Second, Steps: 1 << 30}
	_ = wait.ExponentialBackoffWithContext(ctx, backoff, func(ctx context.Context) (bool, error) {
		if err := v.discover(ctx); err != nil {
			log.Error(err, "Reading the service-account issuer; status requests are answered 500 until it succeeds")
			return false, nil
		}
		log.Info("Verifying status request tokens", "issuer", v.state.Load().issuer)
		return true, nil
	})
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		if err := v.discover(ctx); err != nil {
			log.Error(err, "Re-reading the service-account issuer; keeping the last one")
		}
	}, rediscoverEvery)
	return nil
}

func (v *OIDCVerifier) discover(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, v.base+discoveryPath, nil)
	if err != nil {
		return err
	}
	resp, err := v.client.Do(req)
	if err != nil {
		return fmt.Errorf("reading %s: %w", discoveryPath, err)
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("reading %s: %s", discoveryPath, resp.Status)
	}
	var doc struct {
		Issuer string   `json:"issuer"`
		Algs   []string `json:"id_token_signing_alg_values_supported"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&doc); err != nil {
		return fmt.Errorf("decoding %s: %w", discoveryPath, err)
	}
	if doc.Issuer == "" {
		return fmt.Errorf("%s names no issuer", discoveryPath)
	}
	if old := v.state.Load(); old != nil && old.issuer == doc.Issuer && slices.Equal(old.algs, doc.Algs) {
		return nil // keep the cached keys
	}
	keys := oidc.NewRemoteKeySet(oidc.ClientContext(context.Background(), v.jwks), v.base+jwksPath)
	v.state.Store(&verifierState{issuer: doc.Issuer, keys: keys, algs: doc.Algs})
	return nil
}

// Verify checks the signature, issuer, expiry, that audience is the token's only audience, and
// that the token was issued in namespace; it returns when the token was issued, which binds it to
// the TrainJob that existed then (see StaleTokenError).
func (v *OIDCVerifier) Verify(ctx context.Context, token, audience, namespace string) (time.Time, error) {
	st := v.state.Load()
	if st == nil {
		return time.Time{}, ErrVerifierNotReady
	}
	idToken, err := oidc.NewVerifier(st.issuer, st.keys, &oidc.Config{
		ClientID: audience, SupportedSigningAlgs: st.algs, Now: v.now,
	}).Verify(ctx, token)
	if err != nil {
		return time.Time{}, err
	}
	// A token that is also valid elsewhere (e.g. for the apiserver) is not one the kubelet
	// projected for this TrainJob.
	if len(idToken.Audience) != 1 {
		return time.Time{}, fmt.Errorf("the token has %d audiences; only %q is accepted", len(idToken.Audience), audience)
	}
	var claims struct {
		Kubernetes struct {
			Namespace string `json:"namespace"`
		} `json:"kubernetes.io"`
	}
	if err := idToken.Claims(&claims); err != nil {
		return time.Time{}, err
	}
	if claims.Kubernetes.Namespace != namespace {
		return time.Time{}, fmt.Errorf("the token was issued in namespace %q, not %q", claims.Kubernetes.Namespace, namespace)
	}
	if idToken.IssuedAt.IsZero() {
		return time.Time{}, errors.New("the token has no issue time (iat)")
	}
	return idToken.IssuedAt, nil
}

// limited waits for its rate limiter before every request.
type limited struct {
	next    http.RoundTripper
	limiter flowcontrol.RateLimiter
}

func (l *limited) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := l.limiter.Wait(req.Context()); err != nil {
		return nil, errors.Join(errors.New("waiting to fetch the service-account signing keys"), err)
	}
	return l.next.RoundTrip(req)
}
