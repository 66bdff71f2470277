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

// Package config loads the manager's Configuration file and turns it into controller-runtime
// options.
package config

import (
	"bytes"
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strconv"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	configapi "github.com/gantry-ml/gantry/api/config/v1alpha1"
)

// Load reads the Configuration at path with a strict decoder (an unknown or misspelled field is
// an error) and fills in the defaults. An empty path means all defaults.
func Load(path string) (*configapi.Configuration, error) {
	cfg := &configapi.Configuration{}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("invalid configuration: %w", err)
		}
		if err := yaml.UnmarshalStrict(data, cfg); err != nil {
			return nil, fmt.Errorf("invalid configuration: %s: %w", path, err)
		}
		gvk := schema.FromAPIVersionAndKind(cfg.APIVersion, cfg.Kind)
		if want := configapi.GroupVersion.WithKind("Configuration"); len(bytes.TrimSpace(data)) > 0 && gvk != want {
			return nil, fmt.Errorf("invalid configuration: %s: apiVersion/kind is %q %q, want %q %q",
				path, cfg.APIVersion, cfg.Kind, want.GroupVersion().String(), want.Kind)
		}
	}
	configapi.SetDefaults(cfg)
	if errs := Validate(cfg); len(errs) > 0 {
		return nil, fmt.Errorf("invalid configuration: %w", errs.ToAggregate())
	}
	return cfg, nil
}

// Validate checks a defaulted Configuration.
func Validate(cfg *configapi.Configuration) field.ErrorList {
	var errs field.ErrorList
	for _, p := range []struct {
		path *field.Path
		port *int32
	}{
		{field.NewPath("webhook", "port"), cfg.Webhook.Port},
		{field.NewPath("statusServer", "port"), cfg.StatusServer.Port},
	} {
		if *p.port < 1 || *p.port > 65535 {
			errs = append(errs, field.Invalid(p.path, *p.port, "must be between 1 and 65535"))
		}
	}
	for _, q := range []struct {
		path  *field.Path
		qps   float32
		burst int32
	}{
		{field.NewPath("clientConnection"), *cfg.ClientConnection.QPS, *cfg.ClientConnection.Burst},
		{field.NewPath("statusServer"), *cfg.StatusServer.QPS, *cfg.StatusServer.Burst},
	} {
		if q.qps < 0 {
			errs = append(errs, field.Invalid(q.path.Child("qps"), q.qps, "must not be negative"))
		}
		if q.burst < 0 {
			errs = append(errs, field.Invalid(q.path.Child("burst"), q.burst, "must not be negative"))
		}
	}
	errs = append(errs, validatePortsDiffer(cfg)...)
	for kind, n := range cfg.Controller.GroupKindConcurrency {
		if n < 1 {
			errs = append(errs, field.Invalid(field.NewPath("controller", "groupKindConcurrency").Key(kind), n, "must be at least 1"))
		}
	}
	if cfg.TLS != nil {
		if _, err := TLSVersion(cfg.TLS.MinVersion); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("tls", "minVersion"), cfg.TLS.MinVersion, err.Error()))
		}
		if _, err := CipherSuites(cfg.TLS.CipherSuites); err != nil {
			errs = append(errs, field.Invalid(field.NewPath("tls", "cipherSuites"), cfg.TLS.CipherSuites, err.Error()))
		}
	}
	return errs
}

// validatePortsDiffer refuses a status server port another server of the manager already uses:
// the manager would fail to start with "address already in use".
func validatePortsDiffer(cfg *configapi.Configuration) field.ErrorList {
	port := strconv.Itoa(int(*cfg.StatusServer.Port))
	others := []struct {
		name    string
		address string
	}{
		{"webhook.port", ":" + strconv.Itoa(int(*cfg.Webhook.Port))},
		{"metrics.bindAddress", cfg.Metrics.BindAddress},
		{"health.healthProbeBindAddress", cfg.Health.HealthProbeBindAddress},
	}
	for _, o := range others {
		if _, p, err := net.SplitHostPort(o.address); err == nil && p == port {
			return field.ErrorList{field.Invalid(field.NewPath("statusServer", "port"), *cfg.StatusServer.Port, "must differ from the port of "+o.name)}
		}
	}
	return nil
}

// TLSVersion maps "1.0".."1.3" to the crypto/tls constant; "" is Go's default.
func TLSVersion(v string) (uint16, error) {
	versions := map[string]uint16{"": 0, "1.0": tls.VersionTLS10, "1.1": tls.VersionTLS11, "1.2": tls.VersionTLS12, "1.3": tls.VersionTLS13}
	if id, ok := versions[v]; ok {
		return id, nil
	}
	return 0, fmt.Errorf("must be one of 1.0, 1.1, 1.2, 1.3")
}

// CipherSuites maps IANA names to crypto/tls IDs.
func CipherSuites(names []string) ([]uint16, error) {
	known := map[string]uint16{}
	for _, s := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		known[s.Name] = s.ID
	}
	ids := make([]uint16, 0, len(names))
	for _, n := range names {
		id, ok := known[n]
		if !ok {
			return nil, fmt.Errorf("unknown cipher suite %q", n)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
