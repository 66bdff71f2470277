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
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// visit is one request of a browser to the local UI.
type visit struct {
	method, target string
	form           url.Values
	// cookie sends the session cookie the previous answers set.
	cookie bool
}

// TestLoginLinkIsOneTime: the link's token is exchanged for a session secret of its own (the
// cookie), and is then spent: a second use is refused with a page that says how to get a new
// link, while the browser that used it keeps its session (issue 34, item 10).
func TestLoginLinkIsOneTime(t *testing.T) {
	cases := map[string]struct {
		visits []visit
		want   []string
	}{
		"the link signs in once, the session goes on": {
			visits: []visit{{target: "/jobs?ns=x&token=TOKEN"}, {target: "/jobs?ns=x", cookie: true}, {target: "/runtimes", cookie: true}},
			want:   []string{"302 /jobs?ns=x", "200 page", "200 page"},
		},
		"a second use of the link, from another browser": {
			visits: []visit{{target: "/jobs?token=TOKEN"}, {target: "/jobs?token=TOKEN"}},
			want: []string{"302 /jobs",
				"401 this login link was already used: it signs in one browser, once. For a new link, restart gantry ui (with --new-link if it keeps its token in --token-file)"},
		},
		"the same browser opening the link again keeps its session": {
			visits: []visit{{target: "/jobs?token=TOKEN"}, {target: "/jobs?token=TOKEN", cookie: true}},
			want:   []string{"302 /jobs", "302 /jobs"},
		},
		"the token is not the cookie": {
			visits: []visit{{target: "/jobs?token=TOKEN"}, {target: "/jobs", cookie: false}},
			want:   []string{"302 /jobs", "401 open the login link gantry ui printed (it signs in once)"},
		},
		"a wrong token": {
			visits: []visit{{target: "/jobs?token=wrong"}, {target: "/jobs?token=TOKEN"}},
			want:   []string{"401 this login link is not valid: use the one gantry ui printed", "302 /jobs"},
		},
		"the --open page posts the token": {
			visits: []visit{{method: http.MethodPost, target: "/login", form: url.Values{"token": {"TOKEN"}}}, {target: "/jobs", cookie: true},
				{method: http.MethodPost, target: "/login", form: url.Values{"token": {"TOKEN"}}}},
			want: []string{"200 signed in", "200 page",
				"401 this login link was already used: it signs in one browser, once. For a new link, restart gantry ui (with --new-link if it keeps its token in --token-file)"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			auth, err := NewLocalAuth()
			if err != nil {
				t.Fatal(err)
			}
			h := auth.Wrap(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("page")) }))
			var cookie *http.Cookie
			var got []string
			for _, v := range tc.visits {
				target := strings.ReplaceAll(v.target, "TOKEN", auth.Token())
				var req *http.Request
				if v.method == http.MethodPost {
					form := url.Values{}
					for k, vs := range v.form {
						form[k] = []string{strings.ReplaceAll(vs[0], "TOKEN", auth.Token())}
					}
					req = httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8090"+target, strings.NewReader(form.Encode()))
					req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				} else {
					req = httptest.NewRequest(http.MethodGet, "http://127.0.0.1:8090"+target, nil)
				}
				if v.cookie && cookie != nil {
					req.AddCookie(cookie)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				resp := rec.Result()
				for _, c := range resp.Cookies() {
					if c.Name == sessionCookie {
						cookie = c
						if c.Value == auth.Token() {
							t.Errorf("the session cookie is the login token")
						}
						if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Secure {
							t.Errorf("cookie HttpOnly %v SameSite %v Secure %v, want HttpOnly, Strict, not Secure without TLS", c.HttpOnly, c.SameSite, c.Secure)
						}
					}
				}
				body := strings.TrimSpace(rec.Body.String())
				switch {
				case rec.Code == http.StatusFound:
					got = append(got, fmt.Sprintf("%d %s", rec.Code, rec.Header().Get("Location")))
				case strings.Contains(body, "Signed in"):
					got = append(got, fmt.Sprintf("%d signed in", rec.Code))
				default:
					got = append(got, fmt.Sprintf("%d %s", rec.Code, body))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answers (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSessionCookieIsSecureOverTLS: a UI served over TLS marks its cookie Secure.
func TestSessionCookieIsSecureOverTLS(t *testing.T) {
	auth, err := NewLocalAuth()
	if err != nil {
		t.Fatal(err)
	}
	req := httptest.NewRequest(http.MethodGet, "https://127.0.0.1:8090/jobs?token="+auth.Token(), nil)
	rec := httptest.NewRecorder()
	auth.Wrap(http.NotFoundHandler()).ServeHTTP(rec, req)
	cookies := rec.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].Secure {
		t.Fatalf("cookies over TLS %v, want one, Secure", cookies)
	}
}

// TestOpenKeepsTheTokenOutOfArguments: --open starts the browser on a local page (mode 0600)
// whose form posts the token, so the browser's command line, which every local user can read
// in /proc, holds no secret; the page goes once the link is spent.
func TestOpenKeepsTheTokenOutOfArguments(t *testing.T) {
	auth, err := NewLocalAuth()
	if err != nil {
		t.Fatal(err)
	}
	var argv []string
	command := func(target string) *exec.Cmd {
		argv = []string{"xdg-open", target}
		return exec.Command("true")
	}
	page, err := openLogin(auth, "127.0.0.1:8090", command)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(argv, " "), auth.Token()) {
		t.Errorf("the browser's arguments %q hold the login token", argv)
	}
	if diff := cmp.Diff([]string{"xdg-open", "file://" + page}, argv); diff != "" {
		t.Errorf("the browser's arguments (-want +got):\n%s", diff)
	}
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("the login page's mode %v, want 0600", fi.Mode().Perm())
	}
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	form := regexp.MustCompile(`<form method="post" action="http://127\.0\.0\.1:8090/login"><input type="hidden" name="token" value="([0-9a-f]+)">`)
	m := form.FindStringSubmatch(string(data))
	if m == nil || m[1] != auth.Token() {
		t.Fatalf("the login page does not post the token to /login:\n%s", data)
	}
	req := httptest.NewRequest(http.MethodPost, "http://127.0.0.1:8090/login", strings.NewReader("token="+m[1]))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	rec := httptest.NewRecorder()
	auth.Wrap(http.NotFoundHandler()).ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("posting the page's form: %d %s", rec.Code, rec.Body)
	}
	if _, err := os.Stat(filepath.Dir(page)); !os.IsNotExist(err) {
		t.Errorf("the login page's folder after sign-in: %v, want it removed", err)
	}
}

// TestTokenFileMustBePrivate: --token-file refuses a file others can read, naming the file, its
// mode and the fix; --new-link replaces the saved token.
func TestTokenFileMustBePrivate(t *testing.T) {
	dir := t.TempDir()
	token := strings.Repeat("ab", 24)
	cases := map[string]struct {
		mode    os.FileMode
		newLink bool
		owner   int // another user's uid (the test runs as root to give the file away)
		want    string
	}{
		"another user's file is refused": {mode: 0o600, owner: 4321,
			want: "--token-file %s is owned by uid 4321, not by you (uid 0): the login token must be yours alone; remove it and gantry ui writes a new one, mode 0600"},
		"0600 is kept":              {mode: 0o600, want: "same token"},
		"0640 is refused":           {mode: 0o640, want: "--token-file %s: its mode is 0640, so other users may read the login token: run chmod 600 %s"},
		"0604 is refused":           {mode: 0o604, want: "--token-file %s: its mode is 0604, so other users may read the login token: run chmod 600 %s"},
		"--new-link replaces it":    {mode: 0o600, newLink: true, want: "new token"},
		"--new-link of a 0644 file": {mode: 0o644, newLink: true, want: "--token-file %s: its mode is 0644, so other users may read the login token: run chmod 600 %s"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-"))
			if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(path, tc.mode); err != nil {
				t.Fatal(err)
			}
			if tc.owner != 0 {
				if os.Getuid() != 0 {
					t.Skip("giving a file to another user needs root")
				}
				if err := os.Chown(path, tc.owner, -1); err != nil {
					t.Fatal(err)
				}
			}
			o := &Options{TokenFile: path, NewLink: tc.newLink}
			auth, err := o.localAuth()
			got := ""
			switch {
			case err != nil:
				got = err.Error()
				if ue := (*UsageError)(nil); !strings.HasPrefix(got, "--token-file") || !errors.As(err, &ue) {
					t.Errorf("error %v, want a usage error about --token-file", err)
				}
			case auth.Token() == token:
				got = "same token"
			default:
				got = "new token"
				saved, _ := os.ReadFile(path)
				if strings.TrimSpace(string(saved)) != auth.Token() {
					t.Errorf("the file holds %q, not the new token", saved)
				}
			}
			want := tc.want
			if n := strings.Count(want, "%s"); n > 0 {
				want = fmt.Sprintf(want, []any{path, path}[:n]...)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
