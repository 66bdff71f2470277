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
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// sessionCookie holds the local session after the one-time login link was opened.
const sessionCookie = "gantry-session"

// LocalAuth is --auth-mode=kubeconfig: the server reads with the user's own kubeconfig and
// listens on loopback only; the browser proves it was given the printed link (as Jupyter
// does), so another local user or a web page cannot use the user's credentials through it.
type LocalAuth struct {
	token string
}

// NewLocalAuth makes a random one-time token.
func NewLocalAuth() (*LocalAuth, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	return &LocalAuth{token: hex.EncodeToString(b)}, nil
}

// LocalAuthWithToken keeps a token saved earlier, so a restarted UI keeps its link.
func LocalAuthWithToken(token string) (*LocalAuth, error) {
	if len(token) < 32 {
		return nil, fmt.Errorf("the login token must be at least 32 characters, got %d", len(token))
	}
	return &LocalAuth{token: token}, nil
}

// Token is the secret of the login link.
func (a *LocalAuth) Token() string { return a.token }

// Wrap admits requests with the session cookie; the login link (?token=...) sets it and
// redirects to the same page without the token in the address bar.
func (a *LocalAuth) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			// A page that points its own host name at 127.0.0.1 (DNS rebinding) is refused.
			http.Error(w, "the local UI answers only to localhost and 127.0.0.1", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" {
			if !a.valid(t) {
				http.Error(w, "this login link is not valid: use the one gantry ui printed", http.StatusUnauthorized)
				return
			}
			http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: a.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusFound)
			return
		}
		if c, err := r.Cookie(sessionCookie); err != nil || !a.valid(c.Value) {
			http.Error(w, "open the login link gantry ui printed (it holds a one-time token)", http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (a *LocalAuth) valid(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(a.token)) == 1
}

func loopbackHost(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
