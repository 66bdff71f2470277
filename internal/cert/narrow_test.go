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
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/client-go/rest"
)

func TestNameSelector(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Method+" "+r.URL.Path+" "+r.URL.Query().Get("fieldSelector"))
	}))
	defer srv.Close()
	cfg := &rest.Config{Host: srv.URL + "/proxy"}
	names := rotatorObjects(Options{Namespace: "ns", SecretName: "cert"})
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return &nameSelector{next: rt, names: names} })
	hc, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, req := range []struct{ method, path string }{
		{http.MethodGet, "/api/v1/namespaces/ns/secrets?limit=500"},
		{http.MethodGet, "/api/v1/namespaces/ns/secrets?watch=true&fieldSelector=type%3Dkubernetes.io%2Ftls"},
		{http.MethodGet, "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?watch=true"},
		{http.MethodGet, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"},
		{http.MethodGet, "/api/v1/namespaces/ns/secrets/cert"},
		{http.MethodGet, "/api/v1/namespaces/other/secrets"},
		{http.MethodPut, "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"},
	} {
		r, err := http.NewRequest(req.method, srv.URL+"/proxy"+req.path, strings.NewReader(""))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := hc.Do(r)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
	}
	want := []string{
		"GET /proxy/api/v1/namespaces/ns/secrets metadata.name=cert",
		"GET /proxy/api/v1/namespaces/ns/secrets type=kubernetes.io/tls,metadata.name=cert",
		"GET /proxy/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations metadata.name=validator.trainer.kubeflow.org",
		"GET /proxy/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations metadata.name=defaulter.trainer.kubeflow.org",
		"GET /proxy/api/v1/namespaces/ns/secrets/cert ",
		"GET /proxy/api/v1/namespaces/other/secrets ",
		"PUT /proxy/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests as the apiserver sees them (-want,+got):\n%s", diff)
	}
}
