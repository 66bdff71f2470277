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

package localcluster

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/gantry-ml/gantry/internal/manifest"
)

// kustomizeBuild renders a kustomization with the toolchain's kustomize.
func (c *Cluster) kustomizeBuild(dir string) ([]*unstructured.Unstructured, error) {
	bin := filepath.Join(c.BinDir, "kustomize")
	if _, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("%s not found: run 'hack/toolchain.sh kustomize'", bin)
	}
	cmd := exec.Command(bin, "build", dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return manifest.Decode(out)
}

// webhookConfigurations picks the admission webhook configurations of a rendered install and
// points every webhook at https://127.0.0.1:<port><path> with caBundle: the component runs as a
// process here, not behind a Service. names renames configurations (the in-process certificate
// rotators look theirs up by name); everything else (rules, selectors, failure policies) is
// kept as shipped.
func webhookConfigurations(objs []*unstructured.Unstructured, port int, caBundle []byte, names map[string]string) ([]*unstructured.Unstructured, error) {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if o.GetKind() != "MutatingWebhookConfiguration" && o.GetKind() != "ValidatingWebhookConfiguration" {
			continue
		}
		o = o.DeepCopy()
		if n, ok := names[o.GetName()]; ok {
			o.SetName(n)
		}
		webhooks, _, err := unstructured.NestedSlice(o.Object, "webhooks")
		if err != nil {
			return nil, err
		}
		for i := range webhooks {
			wh, ok := webhooks[i].(map[string]any)
			if !ok {
				return nil, fmt.Errorf("%s: webhook %d is not an object", o.GetName(), i)
			}
			cc, err := urlClientConfig(wh["clientConfig"], port, caBundle)
			if err != nil {
				return nil, fmt.Errorf("%s: webhook %v: %w", o.GetName(), wh["name"], err)
			}
			wh["clientConfig"] = cc
		}
		if err := unstructured.SetNestedSlice(o.Object, webhooks, "webhooks"); err != nil {
			return nil, err
		}
		out = append(out, o)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no webhook configurations found")
	}
	return out, nil
}

// urlClientConfig turns a service client config into a url one on 127.0.0.1.
func urlClientConfig(cc any, port int, caBundle []byte) (map[string]any, error) {
	m, ok := cc.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("no clientConfig")
	}
	svc, ok := m["service"].(map[string]any)
	if !ok {
		return nil, fmt.Errorf("clientConfig has no service")
	}
	path, _ := svc["path"].(string)
	// caBundle is base64 in JSON; marshalling []byte gives exactly that.
	ca, err := json.Marshal(caBundle)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"url":      fmt.Sprintf("https://127.0.0.1:%d%s", port, path),
		"caBundle": strings.Trim(string(ca), `"`),
	}, nil
}

// conversionToURL points a CRD's conversion webhook at 127.0.0.1.
func conversionToURL(crd *unstructured.Unstructured, port int, caBundle []byte) error {
	cc, found, err := unstructured.NestedFieldNoCopy(crd.Object, "spec", "conversion", "webhook", "clientConfig")
	if err != nil || !found {
		return fmt.Errorf("CRD %s has no conversion webhook client config", crd.GetName())
	}
	m, err := urlClientConfig(cc, port, caBundle)
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.GetName(), err)
	}
	return unstructured.SetNestedMap(crd.Object, m, "spec", "conversion", "webhook", "clientConfig")
}

// certSecret is the webhook certificate Secret of a component with in-process rotation, filled in
// advance with a certificate the rotator accepts (it names the Service, as the rotator checks) and
// that also names 127.0.0.1 (which the apiserver checks, calling the url). The rotator then keeps
// it, writes it to the component's certificate directory and injects the CA into the webhook
// configurations, as it would in a cluster.
func certSecret(namespace, name string, ca, serving *keyPair) *unstructured.Unstructured {
	s := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "Secret",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"type":       "Opaque",
		"data": map[string]any{
			"ca.crt":  b64(ca.CertPEM),
			"ca.key":  b64(ca.KeyPEM),
			"tls.crt": b64(serving.CertPEM),
			"tls.key": b64(serving.KeyPEM),
		},
	}}
	return s
}

func b64(b []byte) string {
	data, _ := json.Marshal(b)
	return strings.Trim(string(data), `"`)
}
