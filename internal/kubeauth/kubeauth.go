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

// Package kubeauth authenticates HTTP requests with the apiserver's TokenReviews and authorizes
// them with SubjectAccessReviews, both cached and rate limited: the web UI and the manager's
// metrics endpoint use it. It needs only the two review clients, not the apiserver's
// authentication libraries (which, through controller-runtime's metrics filter, made up a fifth
// of the manager's binary).
package kubeauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
)

// User is who a request comes from.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// Token is the bearer token the user was authenticated with, if any: the web UI makes the
	// reads its store cannot answer with it, so RBAC decides them as for the user's own kubectl.
	Token string
}

// ReviewClient makes TokenReviews and SubjectAccessReviews: a *kubernetes.Clientset, or
// NewReviewClient's, which does not pull every API group's client into the binary.
type ReviewClient interface {
	AuthenticationV1() authnv1client.AuthenticationV1Interface
	AuthorizationV1() authzv1client.AuthorizationV1Interface
}

type reviewClient struct {
	authn authnv1client.AuthenticationV1Interface
	authz authzv1client.AuthorizationV1Interface
}

func (c reviewClient) AuthenticationV1() authnv1client.AuthenticationV1Interface { return c.authn }
func (c reviewClient) AuthorizationV1() authzv1client.AuthorizationV1Interface   { return c.authz }

// NewReviewClient returns a ReviewClient for cfg; httpClient, when not nil, is the connection to
// share (controller-runtime hands its own to a metrics filter).
func NewReviewClient(cfg *rest.Config, httpClient *http.Client) (ReviewClient, error) {
	if httpClient == nil {
		var err error
		if httpClient, err = rest.HTTPClientFor(cfg); err != nil {
			return nil, err
		}
	}
	authn, err := authnv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	authz, err := authzv1client.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return nil, err
	}
	return reviewClient{authn, authz}, nil
}

// Cache lifetimes: an answer that lets a request in is kept a minute, a refusal five seconds,
// so a new RoleBinding takes effect quickly and a flood of bad tokens cannot flood the apiserver.
const (
	allowTTL = time.Minute
	denyTTL  = 5 * time.Second
)

var (
	// ErrUnauthenticated is a request without a valid bearer token (HTTP 401).
	ErrUnauthenticated = errors.New("unauthenticated")
	// ErrRateLimited is a new token refused because too many were refused (from its client's
	// address or in all) or reviewed this second (429).
	ErrRateLimited = errors.New("too many sign-in attempts: try again in a second")
)

// Reviewer authenticates bearer tokens and answers access questions, with cached reviews.
type Reviewer struct {
	client ReviewClient
	tokens *ttlCache[*User]
	sars   *ttlCache[bool]
	// valid holds tokens that authenticated in the last hour: their reviews, once their cache
	// entry expired, are not held back by a flood of bad tokens from their address.
	valid *ttlCache[struct{}]
	limit *rateLimiter
}

// validTTL is how long a token that authenticated is known valid; projected tokens live an hour.
const validTTL = time.Hour

// NewReviewer returns a Reviewer that reviews with client.
func NewReviewer(client ReviewClient) *Reviewer {
	return &Reviewer{
		client: client,
		tokens: newTTLCache[*User](4096), sars: newTTLCache[bool](16384), valid: newTTLCache[struct{}](4096),
		limit: newRateLimiter(reviewBudget, failureBudget, addrBudget),
	}
}

// Authenticate reviews the request's bearer token. Its errors wrap ErrUnauthenticated or
// ErrRateLimited, or are the apiserver's.
func (rv *Reviewer) Authenticate(r *http.Request) (*User, error) {
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil, fmt.Errorf("%w: send a bearer token (Authorization: Bearer ...), e.g. from kubectl create token", ErrUnauthenticated)
	}
	if u, ok := rv.tokens.get(token); ok {
		if u == nil {
			return nil, fmt.Errorf("%w: the token was refused", ErrUnauthenticated)
		}
		return u, nil
	}
	_, known := rv.valid.get(token)
	t, err := rv.limit.allow(clientIP(r), known)
	if err != nil {
		return nil, err
	}
	tr, err := rv.client.AuthenticationV1().TokenReviews().Create(r.Context(),
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	// An apiserver error is not the client's failure: only refused tokens fill the budgets.
	rv.limit.done(t, err == nil && !tr.Status.Authenticated)
	if err != nil {
		return nil, fmt.Errorf("checking the token: %w", err)
	}
	if !tr.Status.Authenticated {
		rv.tokens.put(token, nil, denyTTL)
		return nil, fmt.Errorf("%w: the token was refused", ErrUnauthenticated)
	}
	rv.valid.put(token, struct{}{}, validTTL)
	ui := tr.Status.User
	u := &User{Name: ui.Username, UID: ui.UID, Groups: ui.Groups, Token: token, Extra: map[string][]string{}}
	for k, v := range ui.Extra {
		u.Extra[k] = v
	}
	rv.tokens.put(token, u, allowTTL)
	return u, nil
}

// CanResource reports whether u may do verb on resource (of group) in namespace ns ("" for
// every namespace or a cluster-scoped resource).
func (rv *Reviewer) CanResource(ctx context.Context, u *User, verb, group, resource, subresource, ns string) (bool, error) {
	return rv.can(ctx, u, authzv1.SubjectAccessReviewSpec{
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource},
	}, "r", verb, group, resource, subresource, ns)
}

// CanPath reports whether u may do verb (get, post, ...) on a non-resource URL path, as RBAC's
// nonResourceURLs rules grant (e.g. get on /metrics).
func (rv *Reviewer) CanPath(ctx context.Context, u *User, verb, path string) (bool, error) {
	return rv.can(ctx, u, authzv1.SubjectAccessReviewSpec{
		NonResourceAttributes: &authzv1.NonResourceAttributes{Verb: verb, Path: path},
	}, "n", verb, path)
}

func (rv *Reviewer) can(ctx context.Context, u *User, spec authzv1.SubjectAccessReviewSpec, what ...string) (bool, error) {
	key := strings.Join(append([]string{u.Name, strings.Join(u.Groups, ",")}, what...), "\x00")
	if ok, found := rv.sars.get(key); found {
		return ok, nil
	}
	spec.User, spec.UID, spec.Groups = u.Name, u.UID, u.Groups
	if len(u.Extra) > 0 {
		spec.Extra = map[string]authzv1.ExtraValue{}
		for k, v := range u.Extra {
			spec.Extra[k] = v
		}
	}
	res, err := rv.client.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authzv1.SubjectAccessReview{Spec: spec}, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("checking the access of %s: %w", u.Name, err)
	}
	ttl := denyTTL
	if res.Status.Allowed {
		ttl = allowTTL
	}
	rv.sars.put(key, res.Status.Allowed, ttl)
	return res.Status.Allowed, nil
}

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}
