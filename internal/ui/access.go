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

package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	authnv1 "k8s.io/api/authentication/v1"
	authzv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	authnv1client "k8s.io/client-go/kubernetes/typed/authentication/v1"
	authzv1client "k8s.io/client-go/kubernetes/typed/authorization/v1"
	"k8s.io/client-go/rest"
	"k8s.io/utils/lru"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// User is who a request comes from in token and header modes.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
	// Token is the user's bearer token (token mode): reads the store cannot answer (logs,
	// events) are made with it, so RBAC decides them as for the user's own kubectl.
	Token string
}

type userKey struct{}

// UserFrom is the request's user; nil in kubeconfig mode.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
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

// NewReviewClient returns a ReviewClient for cfg.
func NewReviewClient(cfg *rest.Config) (ReviewClient, error) {
	authn, err := authnv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	authz, err := authzv1client.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	return reviewClient{authn, authz}, nil
}

// Access authenticates requests (token or header mode) and authorizes what each user may see
// with SubjectAccessReviews, cached: the store reads with the UI's own identity, so nothing is
// served before the API server said this user may read it.
type Access struct {
	Clientset ReviewClient
	// Header, when set, is the trusted proxy header carrying the user name (header mode);
	// otherwise requests carry a bearer token (token mode).
	Header string
	// GroupsHeader optionally carries the user's groups in header mode, comma-separated.
	GroupsHeader string

	tokens *ttlCache[*User]
	sars   *ttlCache[bool]
	limit  *rateLimiter
}

// NewAccess returns the token-mode (header == "") or header-mode access control.
func NewAccess(cs ReviewClient, header, groupsHeader string) *Access {
	return &Access{
		Clientset: cs, Header: header, GroupsHeader: groupsHeader,
		tokens: newTTLCache[*User](4096), sars: newTTLCache[bool](16384),
		limit: newRateLimiter(20, 200), // TokenReviews per client IP and in all, per second
	}
}

// Cache lifetimes: an allowed answer is kept a minute, a refusal five seconds, so a new
// RoleBinding takes effect quickly and a flood of bad tokens cannot flood the API server.
const (
	allowTTL = time.Minute
	denyTTL  = 5 * time.Second
)

var errUnauthenticated = errors.New("unauthenticated")

// Wrap authenticates every request but the health check and static files.
func (a *Access) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		u, err := a.authenticate(r)
		if err != nil {
			code := http.StatusUnauthorized
			if errors.Is(err, errRateLimited) {
				code = http.StatusTooManyRequests
			}
			http.Error(w, err.Error(), code)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

func (a *Access) authenticate(r *http.Request) (*User, error) {
	if a.Header != "" {
		name := strings.TrimSpace(r.Header.Get(a.Header))
		if name == "" {
			return nil, fmt.Errorf("%w: the trusted proxy sent no %s header", errUnauthenticated, a.Header)
		}
		u := &User{Name: name}
		if a.GroupsHeader != "" {
			for g := range strings.SplitSeq(r.Header.Get(a.GroupsHeader), ",") {
				if g = strings.TrimSpace(g); g != "" {
					u.Groups = append(u.Groups, g)
				}
			}
		}
		return u, nil
	}
	token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || token == "" {
		return nil, fmt.Errorf("%w: send a bearer token (Authorization: Bearer ...), e.g. from kubectl create token", errUnauthenticated)
	}
	if u, ok := a.tokens.get(token); ok {
		if u == nil {
			return nil, fmt.Errorf("%w: the token was refused", errUnauthenticated)
		}
		return u, nil
	}
	if !a.limit.allow(clientIP(r)) {
		return nil, errRateLimited
	}
	tr, err := a.Clientset.AuthenticationV1().TokenReviews().Create(r.Context(),
		&authnv1.TokenReview{Spec: authnv1.TokenReviewSpec{Token: token}}, metav1.CreateOptions{})
	if err != nil {
		return nil, fmt.Errorf("checking the token: %w", err)
	}
	if !tr.Status.Authenticated {
		a.tokens.put(token, nil, denyTTL)
		return nil, fmt.Errorf("%w: the token was refused", errUnauthenticated)
	}
	ui := tr.Status.User
	u := &User{Name: ui.Username, UID: ui.UID, Groups: ui.Groups, Token: token, Extra: map[string][]string{}}
	for k, v := range ui.Extra {
		u.Extra[k] = v
	}
	a.tokens.put(token, u, allowTTL)
	return u, nil
}

// Can reports whether the user may do verb on resource (of group) in namespace ns ("" for
// every namespace or a cluster-scoped resource).
func (a *Access) Can(ctx context.Context, u *User, verb, group, resource, subresource, ns string) (bool, error) {
	key := strings.Join([]string{u.Name, strings.Join(u.Groups, ","), verb, group, resource, subresource, ns}, "\x00")
	if ok, found := a.sars.get(key); found {
		return ok, nil
	}
	sar := &authzv1.SubjectAccessReview{Spec: authzv1.SubjectAccessReviewSpec{
		User: u.Name, UID: u.UID, Groups: u.Groups,
		ResourceAttributes: &authzv1.ResourceAttributes{Namespace: ns, Verb: verb, Group: group, Resource: resource, Subresource: subresource},
	}}
	for k, v := range u.Extra {
		if sar.Spec.Extra == nil {
			sar.Spec.Extra = map[string]authzv1.ExtraValue{}
		}
		sar.Spec.Extra[k] = v
	}
	res, err := a.Clientset.AuthorizationV1().SubjectAccessReviews().Create(ctx, sar, metav1.CreateOptions{})
	if err != nil {
		return false, fmt.Errorf("checking what %s may see: %w", u.Name, err)
	}
	ttl := denyTTL
	if res.Status.Allowed {
		ttl = allowTTL
	}
	a.sars.put(key, res.Status.Allowed, ttl)
	return res.Status.Allowed, nil
}

// CanReadJobs is the check of every job page and stream.
func (a *Access) CanReadJobs(ctx context.Context, u *User, verb, ns string) error {
	ok, err := a.Can(ctx, u, verb, trainer.GroupVersion.Group, "trainjobs", "", ns)
	if err != nil {
		return err
	}
	if !ok {
		where := "in namespace " + ns
		if ns == "" {
			where = "in every namespace (choose one)"
		}
		return fmt.Errorf("%w: user %q may not %s trainjobs %s", errForbidden, u.Name, verb, where)
	}
	return nil
}

// UserConfig is the REST config reads for the user are made with: the user's own token in
// token mode, impersonation in header mode (the UI's ServiceAccount must be allowed to
// impersonate).
func UserConfig(base *rest.Config, u *User) *rest.Config {
	cfg := rest.AnonymousClientConfig(base)
	if u.Token != "" {
		cfg.BearerToken = u.Token
		return cfg
	}
	cfg = rest.CopyConfig(base)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
	return cfg
}

var errRateLimited = errors.New("too many sign-in attempts: try again in a second")

func clientIP(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// ttlCache is a bounded LRU whose entries expire.
type ttlCache[V any] struct {
	lru *lru.Cache
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](size int) *ttlCache[V] { return &ttlCache[V]{lru: lru.New(size)} }

func (c *ttlCache[V]) get(k string) (V, bool) {
	var zero V
	e, ok := c.lru.Get(k)
	if !ok {
		return zero, false
	}
	ent := e.(ttlEntry[V])
	if time.Now().After(ent.expires) {
		c.lru.Remove(k)
		return zero, false
	}
	return ent.v, true
}

func (c *ttlCache[V]) put(k string, v V, ttl time.Duration) {
	c.lru.Add(k, ttlEntry[V]{v: v, expires: time.Now().Add(ttl)})
}

// rateLimiter allows perIP calls per second per client and total calls per second in all: a
// fixed one-second window is enough to stop TokenReview amplification.
type rateLimiter struct {
	mu           sync.Mutex
	perIP, total int
	window       time.Time
	counts       map[string]int
	all          int
}

func newRateLimiter(perIP, total int) *rateLimiter {
	return &rateLimiter{perIP: perIP, total: total, counts: map[string]int{}}
}

func (l *rateLimiter) allow(ip string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now().Truncate(time.Second)
	if !now.Equal(l.window) {
		l.window, l.counts, l.all = now, map[string]int{}, 0
	}
	if l.counts[ip] >= l.perIP || l.all >= l.total {
		return false
	}
	l.counts[ip]++
	l.all++
	return true
}
