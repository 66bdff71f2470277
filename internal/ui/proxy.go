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
	"crypto/subtle"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/gantry-ml/gantry/internal/kubeauth"
)

// DefaultProxySecretHeader is the header the proxy puts its shared secret in.
const DefaultProxySecretHeader = "X-Gantry-Proxy-Secret"

// minProxySecret is the shortest secret accepted: 16 bytes cannot be guessed over HTTP.
const minProxySecret = 16

// HeaderOptions are header mode's trust settings: how a request proves it came through the
// proxy, and whom the proxy may name. Without a proof, anyone who reaches the pod could name
// any user or group (system:masters) and read every namespace through the UI.
type HeaderOptions struct {
	ProxySecretFile   string
	ProxySecretHeader string
	// AllowedUsers and AllowedGroups are names, or prefixes ending in '*', the proxy may name.
	AllowedUsers  []string
	AllowedGroups []string
}

// AddFlags registers header mode's trust flags.
func (h *HeaderOptions) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&h.ProxySecretFile, "proxy-secret-file", "", "With --auth-mode=header (required): a file holding the secret the proxy sends in --proxy-secret-header; requests without it get 401.")
	fs.StringVar(&h.ProxySecretHeader, "proxy-secret-header", DefaultProxySecretHeader, "With --auth-mode=header, the header the proxy sends its secret in (removed before anything else reads the request).")
	fs.StringSliceVar(&h.AllowedUsers, "allowed-users", nil, "With --auth-mode=header, the users the proxy may name: names, or prefixes ending in '*' (default: any user not starting with system:). A wildcard never matches a system: name unless it starts with system:.")
	fs.StringSliceVar(&h.AllowedGroups, "allowed-groups", nil, "With --auth-mode=header and --groups-header, the groups the proxy may name: names, or prefixes ending in '*' (required with --groups-header; a request naming another group gets 403).")
}

// Validate checks header mode's settings before anything connects: header mode without a
// proxy proof refuses to start.
func (h *HeaderOptions) Validate(groupsHeader string) error {
	if h.ProxySecretFile == "" {
		return usageErrorf("--auth-mode=header trusts the user header only from a verified proxy: set --proxy-secret-file to a file holding the secret the proxy sends in %s", h.secretHeader())
	}
	if groupsHeader != "" && len(h.AllowedGroups) == 0 {
		return usageErrorf("--groups-header %s needs --allowed-groups naming the groups the proxy may pass (system:masters must never be one)", groupsHeader)
	}
	for _, p := range append(append([]string{}, h.AllowedUsers...), h.AllowedGroups...) {
		if i := strings.IndexByte(p, '*'); p == "" || (i >= 0 && i != len(p)-1) {
			return usageErrorf("--allowed-users/--allowed-groups %q: a name, or a prefix ending in '*'", p)
		}
	}
	// Read the secret now, so a wrong file stops the UI before it connects.
	_, err := h.Proxy()
	return err
}

func (h *HeaderOptions) secretHeader() string {
	if h.ProxySecretHeader == "" {
		return DefaultProxySecretHeader
	}
	return h.ProxySecretHeader
}

// Proxy loads the secret: the check Access makes of every header-mode request.
func (h *HeaderOptions) Proxy() (*Proxy, error) {
	data, err := os.ReadFile(h.ProxySecretFile)
	if err != nil {
		return nil, &UsageError{Err: fmt.Errorf("--proxy-secret-file: %w", err)}
	}
	p := &Proxy{
		SecretHeader: http.CanonicalHeaderKey(h.secretHeader()), Secret: []byte(strings.TrimSpace(string(data))),
		Users: NewAllowlist(h.AllowedUsers), Groups: NewAllowlist(h.AllowedGroups),
	}
	if len(p.Secret) < minProxySecret {
		return nil, &UsageError{Err: fmt.Errorf("--proxy-secret-file %s: the secret has %d bytes; use at least %d (e.g. openssl rand -hex 32)", h.ProxySecretFile, len(p.Secret), minProxySecret)}
	}
	if len(h.AllowedGroups) == 0 {
		p.Groups = Allowlist{}
	}
	return p, nil
}

// Proxy is how header mode knows a request came through the authenticating proxy, and whom it
// may name.
type Proxy struct {
	SecretHeader string
	Secret       []byte
	Users        Allowlist
	Groups       Allowlist
}

// verify checks the proxy's secret, compared in constant time, and removes it from the request
// so no handler, log or upstream call sees it.
func (p *Proxy) verify(r *http.Request) error {
	got := r.Header.Values(p.SecretHeader)
	r.Header.Del(p.SecretHeader)
	why := ""
	switch {
	case len(got) == 0:
		why = "is missing"
	case len(got) > 1:
		why = fmt.Sprintf("appears %d times", len(got))
	case subtle.ConstantTimeCompare([]byte(got[0]), p.Secret) != 1:
		why = "is wrong"
	default:
		return nil
	}
	return fmt.Errorf("%w: the request did not come through the trusted proxy: %s %s", kubeauth.ErrUnauthenticated, p.SecretHeader, why)
}

// Allowlist holds the names, or prefixes ending in '*', that may be impersonated. A nil
// Allowlist allows any name not starting with "system:"; an empty one allows none.
type Allowlist []string

// NewAllowlist is the list of patterns; none allows any name outside system:.
func NewAllowlist(patterns []string) Allowlist {
	if len(patterns) == 0 {
		return nil
	}
	return append(Allowlist{}, patterns...)
}

// Allows reports whether name may be impersonated. A wildcard never reaches Kubernetes' own
// system: names (system:masters, system:kube-controller-manager) unless it starts with system:.
func (l Allowlist) Allows(name string) bool {
	if l == nil {
		return !strings.HasPrefix(name, "system:")
	}
	for _, p := range l {
		prefix, wild := strings.CutSuffix(p, "*")
		switch {
		case !wild && name == p:
			return true
		case wild && strings.HasPrefix(name, prefix) && (strings.HasPrefix(prefix, "system:") || !strings.HasPrefix(name, "system:")):
			return true
		}
	}
	return false
}

// single is the one value of header h: a header sent twice (a client's copy beside the
// proxy's) is refused rather than guessing which one the proxy set.
func single(r *http.Request, h string) (string, error) {
	vals := r.Header.Values(h)
	if len(vals) > 1 {
		return "", badRequest(fmt.Errorf("the %s header appears %d times; the proxy sends it once", h, len(vals)))
	}
	if len(vals) == 0 {
		return "", nil
	}
	return strings.TrimSpace(vals[0]), nil
}
