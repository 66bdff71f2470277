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
	"net/http"
	"strings"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/jobview"
	"github.com/gantry-ml/gantry/internal/kubeauth"
)

// User is who a request comes from in token and header modes.
type User = kubeauth.User

type userKey struct{}

// UserFrom is the request's user; nil in kubeconfig mode.
func UserFrom(ctx context.Context) *User {
	u, _ := ctx.Value(userKey{}).(*User)
	return u
}

// Access authenticates requests (token or header mode) and authorizes what each user may see
// with SubjectAccessReviews, cached: the store reads with the UI's own identity, so nothing is
// served before the API server said this user may read it.
type Access struct {
	reviewer *kubeauth.Reviewer
	// Header, when set, is the trusted proxy header carrying the user name (header mode);
	// otherwise requests carry a bearer token (token mode).
	Header string
	// GroupsHeader optionally carries the user's groups in header mode, comma-separated.
	GroupsHeader string
	// Proxy, in header mode, verifies each request came through the proxy and limits whom it
	// may name; without it header mode refuses every request.
	Proxy *Proxy
}

// NewAccess returns the token-mode (header == "") or header-mode access control.
func NewAccess(cs kubeauth.ReviewClient, header, groupsHeader string) *Access {
	return &Access{reviewer: kubeauth.NewReviewer(cs), Header: header, GroupsHeader: groupsHeader}
}

// Wrap authenticates every request but the health check and static files. /metrics takes a
// bearer token allowed get on that non-resource URL, as the manager's metrics endpoint does, in
// header mode too: a scraper reaches the pod directly, not through the proxy.
func (a *Access) Wrap(next http.Handler) http.Handler {
	scrape := a.reviewer.Filter(logr.Discard(), next)
	return securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/metrics" {
			scrape.ServeHTTP(w, r)
			return
		}
		u, err := a.authenticate(r)
		if err != nil {
			code := http.StatusUnauthorized
			switch {
			case errors.Is(err, kubeauth.ErrRateLimited):
				code = http.StatusTooManyRequests
			case errors.Is(err, errBadRequest):
				code = http.StatusBadRequest
			case errors.Is(err, errForbidden):
				code = http.StatusForbidden
			}
			http.Error(w, err.Error(), code)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	}))
}

func (a *Access) authenticate(r *http.Request) (*User, error) {
	if a.Header == "" {
		return a.reviewer.Authenticate(r)
	}
	return a.fromProxy(r)
}

// fromProxy is header mode's user: trusted only once the proxy's proof checks out, named once,
// and limited to the users and groups the admin allows to be impersonated.
func (a *Access) fromProxy(r *http.Request) (*User, error) {
	if a.Proxy == nil {
		return nil, fmt.Errorf("%w: header mode has no verified proxy (--proxy-secret-file), so it trusts no %s header", kubeauth.ErrUnauthenticated, a.Header)
	}
	if err := a.Proxy.verify(r); err != nil {
		return nil, err
	}
	name, err := single(r, a.Header)
	if err != nil {
		return nil, err
	}
	if name == "" {
		return nil, fmt.Errorf("%w: the trusted proxy sent no %s header", kubeauth.ErrUnauthenticated, a.Header)
	}
	if !a.Proxy.Users.Allows(name) {
		return nil, fmt.Errorf("%w: the proxy named user %q (%s), which --allowed-users does not allow to be impersonated", errForbidden, name, a.Header)
	}
	u := &User{Name: name}
	if a.GroupsHeader == "" {
		return u, nil
	}
	groups, err := single(r, a.GroupsHeader)
	if err != nil {
		return nil, err
	}
	for g := range strings.SplitSeq(groups, ",") {
		if g = strings.TrimSpace(g); g == "" {
			continue
		}
		if !a.Proxy.Groups.Allows(g) {
			return nil, fmt.Errorf("%w: the proxy named group %q (%s), which --allowed-groups does not allow to be impersonated", errForbidden, g, a.GroupsHeader)
		}
		u.Groups = append(u.Groups, g)
	}
	return u, nil
}

// Can reports whether the user may do verb on resource (of group) in namespace ns ("" for
// every namespace or a cluster-scoped resource).
func (a *Access) Can(ctx context.Context, u *User, verb, group, resource, subresource, ns string) (bool, error) {
	return a.reviewer.CanResource(ctx, u, verb, group, resource, subresource, ns)
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

// visibleRuntimes keeps the runtimes u may list: the ClusterTrainingRuntimes if u may list them,
// a namespace's TrainingRuntimes if u may list those of the namespace (or of every namespace,
// one review for all). The store lists every runtime with the UI's own identity, so without
// this the names of every team's runtimes would show to anyone signed in.
func (a *Access) visibleRuntimes(ctx context.Context, u *User, rts []jobview.Runtime) ([]jobview.Runtime, error) {
	decided := map[string]bool{}
	may := func(resource, ns string) (bool, error) {
		if ok, seen := decided[resource+"/"+ns]; seen {
			return ok, nil
		}
		ok, err := a.Can(ctx, u, "list", trainer.GroupVersion.Group, resource, "", ns)
		decided[resource+"/"+ns] = ok
		return ok, err
	}
	var out []jobview.Runtime
	for _, rt := range rts {
		var ok bool
		var err error
		if rt.Kind == trainer.ClusterTrainingRuntimeKind {
			ok, err = may("clustertrainingruntimes", "")
		} else if ok, err = may("trainingruntimes", ""); err == nil && !ok {
			ok, err = may("trainingruntimes", rt.Namespace)
		}
		if err != nil {
			return nil, err
		}
		if ok {
			out = append(out, rt)
		}
	}
	return out, nil
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
