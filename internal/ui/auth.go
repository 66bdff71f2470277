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
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
)

// sessionCookie holds the local session after the one-time login link was opened.
const sessionCookie = "gantry-session"

// Answers of the local sign-in.
const (
	msgSpent    = "this login link was already used: it signs in one browser, once. For a new link, restart gantry ui (with --new-link if it keeps its token in --token-file)"
	msgInvalid  = "this login link is not valid: use the one gantry ui printed"
	msgNoCookie = "open the login link gantry ui printed (it signs in once)"
)

// LocalAuth is --auth-mode=kubeconfig: the server reads with the user's own kubeconfig and
// listens on loopback only; the browser proves it was given the printed link (as Jupyter
// does), so another local user or a web page cannot use the user's credentials through it.
// The link's token signs in once: it is exchanged for a session secret of its own (the cookie),
// so a link seen later (in a terminal's scrollback, a shell history, a log) is worth nothing.
type LocalAuth struct {
	token string

	mu      sync.Mutex
	session string // the cookie's secret, once the link was used
	onSpent func()
}

// NewLocalAuth makes a random one-time token.
func NewLocalAuth() (*LocalAuth, error) {
	t, err := randomSecret()
	if err != nil {
		return nil, err
	}
	return &LocalAuth{token: t}, nil
}

func randomSecret() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// LocalAuthWithToken keeps a token saved earlier, so a restarted UI keeps its link: each start
// of the UI accepts it once.
func LocalAuthWithToken(token string) (*LocalAuth, error) {
	if len(token) < 32 {
		return nil, fmt.Errorf("the login token must be at least 32 characters, got %d", len(token))
	}
	return &LocalAuth{token: token}, nil
}

// Token is the secret of the login link.
func (a *LocalAuth) Token() string { return a.token }

// Wrap admits requests with the session cookie. The login link (?token=...) sets it and
// redirects to the same page without the token in the address bar; POST /login (the page of
// --open) sets it too.
func (a *LocalAuth) Wrap(next http.Handler) http.Handler {
	return securityHeaders(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackHost(r.Host) {
			// A page that points its own host name at 127.0.0.1 (DNS rebinding) is refused.
			http.Error(w, "the local UI answers only to localhost and 127.0.0.1", http.StatusForbidden)
			return
		}
		if r.URL.Path == "/healthz" || strings.HasPrefix(r.URL.Path, "/static/") {
			next.ServeHTTP(w, r)
			return
		}
		if r.Method == http.MethodPost && r.URL.Path == "/login" {
			a.postLogin(w, r)
			return
		}
		if t := r.URL.Query().Get("token"); t != "" {
			if !a.signIn(w, r, t) {
				return
			}
			q := r.URL.Query()
			q.Del("token")
			u := *r.URL
			u.RawQuery = q.Encode()
			http.Redirect(w, r, u.RequestURI(), http.StatusFound)
			return
		}
		if !a.hasSession(r) {
			http.Error(w, msgNoCookie, http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	}))
}

// postLogin is the form of --open's page: it answers a page that moves on to /jobs itself, since
// a redirect at the end of a navigation that started on a file:// page would not carry the
// SameSite=Strict cookie.
func (a *LocalAuth) postLogin(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 4<<10)
	if !a.signIn(w, r, r.PostFormValue("token")) {
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, `<!doctype html><html lang="en"><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=/jobs">`+
		`<title>Gantry UI</title><p>Signed in. <a href="/jobs">Continue to the Jobs page</a>.</p></html>`)
}

// signIn spends the link's token t for a new session and sets its cookie, or answers why not. A
// browser that already holds the session may open the spent link again.
func (a *LocalAuth) signIn(w http.ResponseWriter, r *http.Request, t string) bool {
	if subtle.ConstantTimeCompare([]byte(t), []byte(a.token)) != 1 {
		http.Error(w, msgInvalid, http.StatusUnauthorized)
		return false
	}
	a.mu.Lock()
	if a.session != "" {
		a.mu.Unlock()
		if a.hasSession(r) {
			return true
		}
		http.Error(w, msgSpent, http.StatusUnauthorized)
		return false
	}
	session, err := randomSecret()
	if err != nil {
		a.mu.Unlock()
		http.Error(w, "making a session: "+err.Error(), http.StatusInternalServerError)
		return false
	}
	a.session = session
	spent := a.onSpent
	a.mu.Unlock()
	if spent != nil {
		spent()
	}
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: session, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	return true
}

func (a *LocalAuth) hasSession(r *http.Request) bool {
	c, err := r.Cookie(sessionCookie)
	if err != nil {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.session != "" && subtle.ConstantTimeCompare([]byte(c.Value), []byte(a.session)) == 1
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

// openLogin starts the browser (command, xdg-open or open) on a page of its own that posts the
// link's token to addr's /login: the browser's command line, which every local user can read in
// /proc, holds only the page's path, and the page (mode 0600, in a folder of mode 0700) goes
// once the link is spent, or after two minutes. It returns the page's path.
func openLogin(a *LocalAuth, addr string, command func(string) *exec.Cmd) (string, error) {
	dir, err := os.MkdirTemp("", "gantry-ui-login-")
	if err != nil {
		return "", err
	}
	page := filepath.Join(dir, "login.html")
	html := `<!doctype html><html lang="en"><meta charset="utf-8"><title>Gantry UI: signing in</title>` +
		`<form method="post" action="http://` + addr + `/login"><input type="hidden" name="token" value="` + a.token + `">` +
		`<button>Sign in to the Gantry UI</button></form><script>document.forms[0].submit()</script></html>`
	if err := os.WriteFile(page, []byte(html), 0o600); err != nil {
		_ = os.RemoveAll(dir)
		return "", err
	}
	remove := func() { _ = os.RemoveAll(dir) }
	a.mu.Lock()
	a.onSpent = remove
	a.mu.Unlock()
	// A browser loads a local page in seconds; one that never did leaves no token behind.
	time.AfterFunc(2*time.Minute, remove)
	if err := command("file://" + page).Start(); err != nil {
		return page, fmt.Errorf("starting the browser: %w", err)
	}
	return page, nil
}

// browserCommand is the desktop's opener of a URL.
func browserCommand(target string) *exec.Cmd {
	name := "xdg-open"
	if runtime.GOOS == "darwin" {
		name = "open"
	}
	return exec.Command(name, target)
}
