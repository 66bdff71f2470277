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

package testkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// jobSetModule is the module Gantry's JobSet API types come from; its CRDs are read from the
// same module, so the apiserver serves exactly the schema the manager was built against.
const jobSetModule = "sigs.k8s.io/jobset"

// Environment returns an envtest environment that installs Gantry's CRDs, JobSet's CRDs and
// Gantry's webhook configurations when it starts. Set its other fields (more CRD paths,
// UseExistingCluster, ...) before env.Start. The kube-apiserver and etcd binaries come from
// KUBEBUILDER_ASSETS, as with any envtest environment.
func Environment() (*envtest.Environment, error) {
	env := &envtest.Environment{}
	if err := Configure(env); err != nil {
		return nil, err
	}
	return env, nil
}

// Configure adds Gantry's CRDs, JobSet's CRDs and Gantry's webhook configurations to an
// environment the suite builds itself (one that also installs Kueue's CRDs, say). Call it
// before env.Start. Gantry's webhooks are then served on the environment's local webhook
// address: a suite that serves webhooks of its own in-process registers them with the kit's
// manager (Options.Setup), since one address can have one server.
func Configure(env *envtest.Environment) error {
	crds, err := CRDs()
	if err != nil {
		return err
	}
	jobset, err := JobSetCRDDir()
	if err != nil {
		return err
	}
	webhooks, err := WebhookInstallOptions()
	if err != nil {
		return err
	}
	env.CRDs = append(env.CRDs, crds...)
	env.CRDDirectoryPaths = append(env.CRDDirectoryPaths, jobset)
	env.ErrorIfCRDPathMissing = true
	wh := &env.WebhookInstallOptions
	wh.MutatingWebhooks = append(wh.MutatingWebhooks, webhooks.MutatingWebhooks...)
	wh.ValidatingWebhooks = append(wh.ValidatingWebhooks, webhooks.ValidatingWebhooks...)
	return nil
}

// JobSetCRDDir returns the directory of JobSet's CRDs (config/components/crd/bases) in the Go
// module cache, at the sigs.k8s.io/jobset version the running binary is built with: JobSet's
// CRDs are read from its module, never copied, so they cannot drift from the API types.
func JobSetCRDDir() (string, error) {
	dir, err := moduleDir(jobSetModule)
	if err != nil {
		return "", err
	}
	crds := filepath.Join(dir, "config", "components", "crd", "bases")
	if _, err := os.Stat(crds); err != nil {
		return "", fmt.Errorf("JobSet's CRDs: %w", err)
	}
	return crds, nil
}

// moduleDir locates a dependency: the directory a local replace names, else the module version
// (or its replacement) in the module cache, downloaded if missing. The version is the one
// compiled in, from the build info, where the binary records it; a test binary does not, and
// is run in its package's directory, so there the go command lists the module of the working
// directory's build.
func moduleDir(module string) (string, error) {
	dep, err := buildDep(module)
	if err != nil {
		return "", err
	}
	if dep.Replace != nil {
		dep = dep.Replace
	}
	if dep.Dir != "" {
		return dep.Dir, nil
	}
	if dep.Version == "" { // a local replace, as the build info records it
		return dep.Path, nil
	}
	return download(dep.Path, dep.Version)
}

// listedModule is what `go list -m -json` says of a module; build info fills Path and Version.
type listedModule struct {
	Path, Version, Dir string
	Replace            *listedModule
}

func buildDep(module string) (*listedModule, error) {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path != module {
				continue
			}
			dep := &listedModule{Path: d.Path, Version: d.Version}
			if d.Replace != nil {
				dep.Replace = &listedModule{Path: d.Replace.Path, Version: d.Replace.Version}
			}
			return dep, nil
		}
	}
	cmd := exec.Command("go", "list", "-m", "-json", module)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("the binary records no %s, and 'go list -m %s' failed: %w: %s", module, module, err, strings.TrimSpace(stderr.String()))
	}
	dep := &listedModule{}
	if err := json.Unmarshal(stdout.Bytes(), dep); err != nil {
		return nil, fmt.Errorf("reading 'go list -m -json %s': %w", module, err)
	}
	return dep, nil
}

// download returns the module cache directory of module@version, downloading it if missing
// (nothing is fetched when a build has already put it there).
func download(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	// Outside any module: the working directory's go.mod has no say over a pinned version.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	// On failure the go command still prints the JSON, with the reason in Error.
	runErr := cmd.Run()
	var out struct{ Dir, Error string }
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return "", fmt.Errorf("go mod download %s@%s: %w: %s", module, version, errors.Join(runErr, err), strings.TrimSpace(stderr.String()))
	}
	if out.Dir == "" {
		return "", fmt.Errorf("go mod download %s@%s: %s", module, version, strings.TrimSpace(out.Error+" "+stderr.String()))
	}
	return out.Dir, nil
}
