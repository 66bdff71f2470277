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
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

// TestHeaderModeTrustsOnlyTheProxy sends what a client that reaches the pod directly can send:
// only a request carrying the proxy's secret once, naming an allowed user and groups, is served,
// impersonating exactly that identity.
func TestHeaderModeTrustsOnlyTheProxy(t *testing.T) {
	a := headerAccess(t)
	base := &rest.Config{Host: "https://api.example", BearerToken: "ui-sa-token"}
	type header struct{ name, value string }
	tests := []struct {
		name    string
		headers []header
		code    int
		message string
		want    rest.ImpersonationConfig
	}{{
		name:    "no proxy proof, system:masters",
		headers: []header{{"kubeflow-userid", "mallory"}, {"kubeflow-groups", "system:masters"}},
		code:    http.StatusUnauthorized,
		message: "unauthenticated: the request did not come through the trusted proxy: X-Gantry-Proxy-Secret is missing",
	}, {
		name:    "forged secret",
		headers: []header{{"X-Gantry-Proxy-Secret", "guessed-guessed-guessed"}, {"kubeflow-userid", "alice"}},
		code:    http.StatusUnauthorized,
		message: "unauthenticated: the request did not come through the trusted proxy: X-Gantry-Proxy-Secret is wrong",
	}, {
		name:    "secret sent twice, a forged one first",
		headers: []header{{"X-Gantry-Proxy-Secret", "guessed"}, {"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "alice"}},
		code:    http.StatusUnauthorized,
		message: "unauthenticated: the request did not come through the trusted proxy: X-Gantry-Proxy-Secret appears 2 times",
	}, {
		name:    "valid proof, system:masters not allowed",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "alice"}, {"kubeflow-groups", "team-a,system:masters"}},
		code:    http.StatusForbidden,
		message: `forbidden: the proxy named group "system:masters" (kubeflow-groups), which --allowed-groups does not allow to be impersonated`,
	}, {
		name:    "valid proof, a system: user",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "system:kube-controller-manager"}},
		code:    http.StatusForbidden,
		message: `forbidden: the proxy named user "system:kube-controller-manager" (kubeflow-userid), which --allowed-users does not allow to be impersonated`,
	}, {
		name:    "duplicated user header",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "alice"}, {"kubeflow-userid", "bob"}},
		code:    http.StatusBadRequest,
		message: "bad request: the kubeflow-userid header appears 2 times; the proxy sends it once",
	}, {
		name:    "duplicated groups header",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "alice"}, {"kubeflow-groups", "team-a"}, {"kubeflow-groups", "system:masters"}},
		code:    http.StatusBadRequest,
		message: "bad request: the kubeflow-groups header appears 2 times; the proxy sends it once",
	}, {
		name:    "valid proof, no user",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}},
		code:    http.StatusUnauthorized,
		message: "unauthenticated: the trusted proxy sent no kubeflow-userid header",
	}, {
		name:    "valid",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", " alice "}, {"kubeflow-groups", "team-a, team-b"}},
		code:    http.StatusOK,
		want:    rest.ImpersonationConfig{UserName: "alice", Groups: []string{"team-a", "team-b"}},
	}, {
		name:    "valid, no groups",
		headers: []header{{"X-Gantry-Proxy-Secret", proxySecret}, {"kubeflow-userid", "bob@example.com"}},
		code:    http.StatusOK,
		want:    rest.ImpersonationConfig{UserName: "bob@example.com"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got *rest.Config
			var leaked []string
			h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = UserConfig(base, UserFrom(r.Context()))
				leaked = r.Header.Values("X-Gantry-Proxy-Secret")
			}))
			req := httptest.NewRequest(http.MethodGet, "/jobs?ns=team-a", nil)
			for _, hd := range tt.headers {
				req.Header.Add(hd.name, hd.value)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			if rec.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.code, rec.Body)
			}
			if tt.code != http.StatusOK {
				if got != nil {
					t.Fatalf("a refused request reached the handler, impersonating %+v", got.Impersonate)
				}
				if diff := cmp.Diff(tt.message, strings.TrimSpace(rec.Body.String())); diff != "" {
					t.Errorf("message (-want +got):\n%s", diff)
				}
				return
			}
			if diff := cmp.Diff(tt.want, got.Impersonate); diff != "" {
				t.Errorf("impersonation (-want +got):\n%s", diff)
			}
			if got.BearerToken != base.BearerToken {
				t.Errorf("impersonation is made with the UI's own credentials, got token %q", got.BearerToken)
			}
			if len(leaked) > 0 {
				t.Errorf("the proxy secret reached the handler: %q", leaked)
			}
		})
	}
}

const proxySecret = "s3cret-of-the-proxy-0123456789abcdef"

// headerAccess is header mode as Run builds it from the flags: the proxy's secret in a file,
// team-* groups allowed, any user outside system:.
func headerAccess(t *testing.T) *Access {
	t.Helper()
	file := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(file, []byte(proxySecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h := HeaderOptions{ProxySecretFile: file, AllowedGroups: []string{"team-*"}}
	if err := h.Validate("kubeflow-groups"); err != nil {
		t.Fatal(err)
	}
	p, err := h.Proxy()
	if err != nil {
		t.Fatal(err)
	}
	a := NewAccess(nil, "kubeflow-userid", "kubeflow-groups")
	a.Proxy = p
	return a
}

// TestHeaderModeWithoutProofRefusesToStart: header mode needs a proxy proof, and a groups
// header needs the groups it may pass.
func TestHeaderModeWithoutProofRefusesToStart(t *testing.T) {
	short := filepath.Join(t.TempDir(), "short")
	if err := os.WriteFile(short, []byte("abc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		opts   HeaderOptions
		groups string
		want   string
	}{
		{"no proof", HeaderOptions{}, "", "--auth-mode=header trusts the user header only from a verified proxy: set --proxy-secret-file to a file holding the secret the proxy sends in X-Gantry-Proxy-Secret"},
		{"groups without allowed groups", HeaderOptions{ProxySecretFile: short}, "kubeflow-groups", "--groups-header kubeflow-groups needs --allowed-groups naming the groups the proxy may pass (system:masters must never be one)"},
		{"a star inside a name", HeaderOptions{ProxySecretFile: short, AllowedUsers: []string{"a*b"}}, "", `--allowed-users/--allowed-groups "a*b": a name, or a prefix ending in '*'`},
		{"a short secret", HeaderOptions{ProxySecretFile: short}, "", "--proxy-secret-file " + short + ": the secret has 3 bytes; use at least 16 (e.g. openssl rand -hex 32)"},
		{"a missing file", HeaderOptions{ProxySecretFile: short + ".missing"}, "", "--proxy-secret-file: open " + short + ".missing: no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate(tt.groups)
			if err == nil {
				_, err = tt.opts.Proxy()
			}
			if _, ok := errors.AsType[*UsageError](err); !ok {
				t.Fatalf("want a usage error, got %v", err)
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestAllowlist(t *testing.T) {
	tests := []struct {
		list  Allowlist
		name  string
		allow bool
	}{
		{nil, "alice@example.com", true},
		{nil, "system:admin", false},
		{Allowlist{}, "team-a", false},
		{Allowlist{"team-*"}, "team-a", true},
		{Allowlist{"team-*"}, "teams", false},
		{Allowlist{"*"}, "system:masters", false},
		{Allowlist{"*"}, "ml", true},
		{Allowlist{"system:serviceaccount:team-a:*"}, "system:serviceaccount:team-a:alice", true},
		{Allowlist{"system:serviceaccount:team-a:*"}, "system:serviceaccount:team-b:alice", false},
		{Allowlist{"system:masters"}, "system:masters", true},
	}
	for _, tt := range tests {
		if got := tt.list.Allows(tt.name); got != tt.allow {
			t.Errorf("%q allows %q: %v, want %v", tt.list, tt.name, got, tt.allow)
		}
	}
}
