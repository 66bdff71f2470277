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

package kubeauth

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/go-logr/logr"
)

// Filter guards next (the manager's metrics endpoint): a request needs a bearer token the
// apiserver authenticates, and its user must be allowed the request's method, lower-cased, on
// its path, as RBAC's nonResourceURLs rules grant (get on /metrics). It answers 401, 403, 429
// while tokens are being flooded, and 500 when the apiserver cannot be asked.
func (rv *Reviewer) Filter(log logr.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := rv.Authenticate(r)
		switch {
		case errors.Is(err, ErrUnauthenticated):
			log.V(4).Info("Refused a request", "path", r.URL.Path, "reason", err.Error())
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		case errors.Is(err, ErrRateLimited):
			http.Error(w, err.Error(), http.StatusTooManyRequests)
			return
		case err != nil:
			log.Error(err, "Authenticating a request", "path", r.URL.Path)
			http.Error(w, "the apiserver could not check the token", http.StatusInternalServerError)
			return
		}
		verb := strings.ToLower(r.Method)
		ok, err := rv.CanPath(r.Context(), u, verb, r.URL.Path)
		if err != nil {
			log.Error(err, "Authorizing a request", "path", r.URL.Path, "user", u.Name)
			http.Error(w, "the apiserver could not check the access of user "+u.Name, http.StatusInternalServerError)
			return
		}
		if !ok {
			msg := fmt.Sprintf("user %q may not %s %s", u.Name, verb, r.URL.Path)
			log.V(4).Info("Refused a request", "path", r.URL.Path, "reason", msg)
			http.Error(w, msg, http.StatusForbidden)
			return
		}
		next.ServeHTTP(w, r)
	})
}
