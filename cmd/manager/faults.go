//go:build faults

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

// The reliability suite's manager: built with -tags faults, it injects the faults
// GANTRY_FAULT_INJECTION names into its API client. nofaults.go is the product's build.

package main

import (
	"os"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"

	"github.com/gantry-ml/gantry/internal/faults"
)

// withFaults throttles rc and wraps the manager's client as the injected faults ask.
func withFaults(rc *rest.Config, opts *ctrl.Options) (*rest.Config, error) {
	rc, err := faults.WrapRESTConfig(rc)
	if err != nil {
		return nil, err
	}
	if faults.Any() {
		opts.NewClient = faults.NewClient
	}
	return rc, nil
}

func warnFaults(log logr.Logger) {
	if faults.Any() {
		log.Info("WARNING: faults are injected on purpose; this manager is for the reliability suite only",
			faults.EnvVar, os.Getenv(faults.EnvVar))
	}
}
