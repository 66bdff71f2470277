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

package cert

import (
	"net/http"
	"strings"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
)

// The rotator (cert-controller) builds a cache of its own, with no options, over every Secret of
// the manager's namespace and every webhook configuration of the cluster. RBAC restricts a list
// or watch to named objects (resourceNames) only when the request selects metadata.name, so the
// rotator is handed a manager whose REST config adds that selector to its lists and watches of
// exactly those collections: it then caches, and needs permission for, its three objects alone.

// rotatorManager is the manager as the rotator sees it: the same, but for its REST config.
type rotatorManager struct {
	ctrl.Manager
	cfg *rest.Config
}

func (m rotatorManager) GetConfig() *rest.Config { return m.cfg }

// narrowedManager returns mgr with a REST config that reads, of each collection path in names,
// only the object named there.
func narrowedManager(mgr ctrl.Manager, names map[string]string) ctrl.Manager {
	cfg := rest.CopyConfig(mgr.GetConfig())
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &nameSelector{next: rt, names: names} })
	return rotatorManager{Manager: mgr, cfg: cfg}
}

// rotatorObjects maps the collection path of each object the rotator reads to its name.
func rotatorObjects(o Options) map[string]string {
	return map[string]string{
		"/api/v1/namespaces/" + o.Namespace + "/secrets":                        o.SecretName,
		"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations":   MutatingWebhookConfig,
		"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations": ValidatingWebhookConfig,
	}
}

// nameSelector adds fieldSelector=metadata.name=<name> to the GETs of a collection (lists and
// watches) whose path ends in a key of names; a path prefix is the apiserver's, behind a proxy.
type nameSelector struct {
	next  http.RoundTripper
	names map[string]string
}

func (s *nameSelector) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return s.next.RoundTrip(req)
	}
	for path, name := range s.names {
		if !strings.HasSuffix(req.URL.Path, path) {
			continue
		}
		q := req.URL.Query()
		selector := fields.OneTermEqualSelector("metadata.name", name)
		if existing, err := fields.ParseSelector(q.Get("fieldSelector")); err == nil && !existing.Empty() {
			selector = fields.AndSelectors(existing, selector)
		}
		q.Set("fieldSelector", selector.String())
		// A RoundTripper must not change the request it is given.
		req = req.Clone(req.Context())
		req.URL.RawQuery = q.Encode()
		break
	}
	return s.next.RoundTrip(req)
}

// WrappedRoundTripper lets client-go find the transport underneath (to cancel requests).
func (s *nameSelector) WrappedRoundTripper() http.RoundTripper { return s.next }
