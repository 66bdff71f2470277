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
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/gantry-ml/gantry/internal/manifest"
)

// Names the in-process certificate rotators derive from their configuration.
const (
	gantryNamespace  = "kubeflow-system"
	gantryService    = "kubeflow-trainer-controller-manager"
	gantryWebhookDNS = gantryService + "." + gantryNamespace + ".svc"
	gantrySecret     = "kubeflow-trainer-webhook-cert"
	kueueNamespace   = "kueue-system"
	kueueService     = "kueue-webhook-service"
	kueueWebhookDNS  = kueueService + "." + kueueNamespace + ".svc"
	kueueSecret      = "kueue-webhook-server-cert"
)

// ModuleDir downloads (or finds) a module in the Go module cache and returns its directory.
// Other projects' CRDs and webhook manifests are read from there at the pinned version, never
// copied into this repository.
func ModuleDir(module, version string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module+"@"+version)
	// Outside any module, so the checkout's go.mod and go.sum stay untouched.
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOTOOLCHAIN=local", "GOFLAGS=")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var info struct{ Dir, Error string }
	if jerr := json.Unmarshal(out, &info); jerr != nil || info.Dir == "" {
		if err == nil && jerr == nil {
			err = errors.New("no module directory")
		}
		return "", fmt.Errorf("go mod download %s@%s: %w: %s %s", module, version, errors.Join(err, jerr), info.Error, strings.TrimSpace(stderr.String()))
	}
	return info.Dir, nil
}

func (c *Cluster) moduleDir(module, versionKey string) (string, error) {
	versions, err := Versions(c.Root)
	if err != nil {
		return "", err
	}
	v := versions[versionKey]
	if v == "" {
		return "", fmt.Errorf("hack/versions.env has no %s", versionKey)
	}
	return ModuleDir(module, v)
}

// prepareJobSet installs JobSet's CRD and webhook configurations and writes its configuration:
// certificates provided (certs/jobset), webhooks on 127.0.0.1.
func (c *Cluster) prepareJobSet(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	dir, err := c.moduleDir("sigs.k8s.io/jobset", "JOBSET_VERSION")
	if err != nil {
		return err
	}
	crds, err := manifest.ReadPath(filepath.Join(dir, "config", "components", "crd", "bases"))
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, cl, crds); err != nil {
		return err
	}
	rendered, err := c.kustomizeBuild(filepath.Join(dir, "config", "components", "webhook"))
	if err != nil {
		return err
	}
	whs, err := webhookConfigurations(rendered, c.Settings.Ports.JobSetWebhook, c.pki.ca.CertPEM, map[string]string{
		"mutating-webhook-configuration":   "jobset-mutating-webhook-configuration",
		"validating-webhook-configuration": "jobset-validating-webhook-configuration",
	})
	if err != nil {
		return fmt.Errorf("the JobSet webhooks: %w", err)
	}
	if err := apply(ctx, cl, whs...); err != nil {
		return err
	}
	p := c.Settings.Ports
	return c.writeConfig("jobset.yaml", map[string]any{
		"apiVersion":     "config.jobset.x-k8s.io/v1alpha1",
		"kind":           "Configuration",
		"leaderElection": map[string]any{"leaderElect": false},
		// Elastic TrainJobs (elastic.gantry.dev) scale a running JobSet's node job.
		"featureGates":           map[string]any{"ElasticJobSet": true},
		"internalCertManagement": map[string]any{"enable": false},
		"webhook":                map[string]any{"host": "127.0.0.1", "port": p.JobSetWebhook, "certDir": c.path("certs", "jobset")},
		"metrics":                map[string]any{"bindAddress": "0"},
		"health":                 map[string]any{"healthProbeBindAddress": hostPort(p.JobSetHealth)},
	})
}

func (c *Cluster) writeConfig(name string, doc map[string]any) error {
	data, err := yaml.Marshal(doc)
	if err != nil {
		return err
	}
	return writeFileAtomic(c.path("config", name), data, 0o644)
}

// prepareGantry builds the manager from the checkout, installs Gantry's CRDs (and scheduler-plugins'
// PodGroup) and the webhook configurations config/webhook ships (names, rules and object selectors
// as installed; only the client config points at 127.0.0.1), seeds the certificate Secret, gives
// the manager the identity and the permissions config/rbac ships (installManagerIdentity) and
// writes the Configuration.
// Certificate management stays on, as installed: the rotator finds a valid certificate in the
// Secret, keeps it, writes it to certs/gantry-manager and injects the CA into the webhooks.
func (c *Cluster) prepareGantry(ctx context.Context) error {
	// As the Dockerfile builds it (static, trimmed, stripped): the scale run measures its memory,
	// and a cgo build maps libc and holds different pages.
	args := []string{"build", "-trimpath", "-ldflags", "-s -w", "-o", c.path("bin", "manager")}
	if len(c.ManagerBuildTags) > 0 {
		args = append(args, "-tags", strings.Join(c.ManagerBuildTags, ","))
	}
	args = append(args, "./cmd/manager")
	c.logf("  %-24s building %s", "gantry-manager", strings.Join(args[6:], " "))
	build := exec.CommandContext(ctx, "go", args...)
	build.Dir = c.Root
	build.Env = append(os.Environ(), "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/manager: %w\n%s", err, out)
	}
	cl, err := c.Client()
	if err != nil {
		return err
	}
	crds, err := manifest.ReadPath(filepath.Join(c.Root, "config", "crd", "bases"))
	if err != nil {
		return err
	}
	// scheduler-plugins' PodGroup, so the coscheduling plugin is on (and its RBAC rules used);
	// installed first, since the manager enables a plugin only if its CRD is there at start.
	schedulerPlugins, err := c.moduleDir("sigs.k8s.io/scheduler-plugins", "SCHEDULER_PLUGINS_VERSION")
	if err != nil {
		return err
	}
	podGroup, err := manifest.ReadPath(filepath.Join(schedulerPlugins, "manifests", "coscheduling", "crd.yaml"))
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, cl, append(crds, podGroup...)); err != nil {
		return err
	}
	if err := apply(ctx, cl, certSecret(gantryNamespace, gantrySecret, c.pki.gantryCA, c.pki.gantry)); err != nil {
		return err
	}
	if err := c.installManagerIdentity(ctx, cl); err != nil {
		return err
	}
	rendered, err := c.kustomizeBuild(filepath.Join(c.Root, "config", "webhook"))
	if err != nil {
		return err
	}
	whs, err := webhookConfigurations(rendered, c.Settings.Ports.GantryWebhook, c.pki.gantryCA.CertPEM, nil)
	if err != nil {
		return fmt.Errorf("the Gantry webhooks: %w", err)
	}
	if err := apply(ctx, cl, whs...); err != nil {
		return err
	}
	p := c.Settings.Ports
	return c.writeConfig("gantry.yaml", map[string]any{
		"apiVersion": "config.trainer.kubeflow.org/v1alpha1",
		"kind":       "Configuration",
		"webhook":    map[string]any{"host": "127.0.0.1", "port": p.GantryWebhook},
		// Scrapes are authenticated and authorized by the apiserver, as metrics.auth.enabled
		// installs ask for (a TokenReview and a SubjectAccessReview each).
		"metrics": map[string]any{"bindAddress": hostPort(p.GantryMetrics), "auth": map[string]any{"enabled": true}},
		"health":  map[string]any{"healthProbeBindAddress": hostPort(p.GantryHealth)},
		"leaderElection": map[string]any{
			"leaderElect": true, "resourceName": "trainer.kubeflow.org", "resourceNamespace": gantryNamespace,
		},
		"certManagement": map[string]any{"enable": true, "webhookServiceName": gantryService, "webhookSecretName": gantrySecret},
		"statusServer":   map[string]any{"port": p.GantryStatus},
	})
}

// installRuntimes applies the shipped ClusterTrainingRuntimes (config/runtimes).
func (c *Cluster) installRuntimes(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	objs, err := c.kustomizeBuild(filepath.Join(c.Root, "config", "runtimes"))
	if err != nil {
		return err
	}
	return apply(ctx, cl, objs...)
}

// prepareKueue installs Kueue's CRDs (with their conversion webhook, as Kueue's kustomization
// patches them) and webhook configurations from the pinned module, seeds its certificate Secret
// the same way as Gantry's, and writes a Configuration with the TrainJob integration.
func (c *Cluster) prepareKueue(ctx context.Context) error {
	cl, err := c.Client()
	if err != nil {
		return err
	}
	dir, err := c.moduleDir("sigs.k8s.io/kueue", "KUEUE_VERSION")
	if err != nil {
		return err
	}
	if err := ensureNamespace(ctx, cl, kueueNamespace); err != nil {
		return err
	}
	crds, err := c.kueueCRDs(filepath.Join(dir, "config", "components", "crd"))
	if err != nil {
		return err
	}
	if err := installCRDs(ctx, cl, crds); err != nil {
		return err
	}
	if err := apply(ctx, cl, certSecret(kueueNamespace, kueueSecret, c.pki.kueueCA, c.pki.kueue)); err != nil {
		return err
	}
	rendered, err := c.kustomizeBuild(filepath.Join(dir, "config", "components", "webhook"))
	if err != nil {
		return err
	}
	// Kueue's rotator looks for <service name minus "-webhook-service">-{mutating,validating}-webhook-configuration.
	whs, err := webhookConfigurations(rendered, c.Settings.Ports.KueueWebhook, c.pki.kueueCA.CertPEM, map[string]string{
		"mutating-webhook-configuration":   "kueue-mutating-webhook-configuration",
		"validating-webhook-configuration": "kueue-validating-webhook-configuration",
	})
	if err != nil {
		return fmt.Errorf("the Kueue webhooks: %w", err)
	}
	if err := apply(ctx, cl, whs...); err != nil {
		return err
	}
	return c.writeConfig("kueue.yaml", c.kueueConfig())
}

// kueueConfig is Kueue's Configuration: the TrainJob integration, webhooks and health on
// 127.0.0.1, the certificate rotation as installed; a MultiKueue manager's also sets MultiKueue up.
func (c *Cluster) kueueConfig() map[string]any {
	p := c.Settings.Ports
	cfg := map[string]any{
		"apiVersion":                 "config.kueue.x-k8s.io/v1beta2",
		"kind":                       "Configuration",
		"namespace":                  kueueNamespace,
		"manageJobsWithoutQueueName": false,
		"leaderElection":             map[string]any{"leaderElect": false},
		"webhook":                    map[string]any{"host": "127.0.0.1", "port": p.KueueWebhook, "certDir": c.path("certs", "kueue")},
		"health":                     map[string]any{"healthProbeBindAddress": hostPort(p.KueueHealth)},
		"metrics":                    map[string]any{"bindAddress": "0"},
		"internalCertManagement": map[string]any{
			"enable": true, "webhookServiceName": kueueService, "webhookSecretName": kueueSecret,
		},
		"integrations": map[string]any{"frameworks": []string{"trainer.kubeflow.org/trainjob"}},
		// The visibility API needs an aggregated apiserver setup this cluster does not have.
		"featureGates": map[string]any{"VisibilityOnDemand": false},
	}
	if c.Settings.MultiKueue {
		cfg["featureGates"].(map[string]any)["MultiKueue"] = true
		cfg["multiKueue"] = multiKueueConfig()
	}
	return cfg
}

// kueueCRDs reads the CRDs Kueue's crd kustomization lists and applies its conversion patches,
// pointing them at Kueue on 127.0.0.1.
func (c *Cluster) kueueCRDs(dir string) ([]*unstructured.Unstructured, error) {
	var kust struct {
		Resources []string `json:"resources"`
		Patches   []struct {
			Path string `json:"path"`
		} `json:"patches"`
	}
	data, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	if err != nil {
		return nil, err
	}
	if err := yaml.Unmarshal(data, &kust); err != nil {
		return nil, fmt.Errorf("%s/kustomization.yaml: %w", dir, err)
	}
	byName := map[string]*unstructured.Unstructured{}
	var crds []*unstructured.Unstructured
	for _, r := range kust.Resources {
		objs, err := manifest.ReadPath(filepath.Join(dir, r))
		if err != nil {
			return nil, err
		}
		for _, o := range objs {
			byName[o.GetName()] = o
			crds = append(crds, o)
		}
	}
	for _, p := range kust.Patches {
		patches, err := manifest.ReadPath(filepath.Join(dir, p.Path))
		if err != nil {
			return nil, err
		}
		for _, patch := range patches {
			conv, found, _ := unstructured.NestedMap(patch.Object, "spec", "conversion")
			crd := byName[patch.GetName()]
			if !found || crd == nil {
				continue
			}
			if err := unstructured.SetNestedMap(crd.Object, conv, "spec", "conversion"); err != nil {
				return nil, err
			}
			if err := conversionToURL(crd, c.Settings.Ports.KueueWebhook, c.pki.kueueCA.CertPEM); err != nil {
				return nil, err
			}
		}
	}
	if len(crds) == 0 {
		return nil, fmt.Errorf("no CRDs in %s", dir)
	}
	return crds, nil
}

// smokeWebhooks sends one dry-run create through the webhooks of each component, so a broken
// certificate or address shows here rather than in the first job.
func (c *Cluster) smokeWebhooks(ctx context.Context, cl client.Client) error {
	objs := []string{`
apiVersion: jobset.x-k8s.io/v1alpha2
kind: JobSet
metadata: {name: smoke, namespace: default}
spec:
  replicatedJobs:
  - name: w
    template:
      spec:
        template:
          spec:
            containers: [{name: c, image: busybox}]
`, `
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: smoke, namespace: default}
spec:
  runtimeRef: {name: torch-distributed}
`}
	if c.Settings.WithoutGantry {
		// No TrainJob CRD, no Gantry webhooks: JobSet's (and Kueue's) are there to answer.
		objs = objs[:1]
	}
	if c.Settings.Kueue {
		objs = append(objs, `
apiVersion: kueue.x-k8s.io/v1beta2
kind: ResourceFlavor
metadata: {name: smoke}
`)
	}
	for _, doc := range objs {
		o := &unstructured.Unstructured{}
		if err := yaml.Unmarshal([]byte(doc), &o.Object); err != nil {
			return err
		}
		if err := cl.Create(ctx, o, client.DryRunAll); err != nil {
			return fmt.Errorf("dry-run create of a %s: %w", o.GetKind(), err)
		}
	}
	return nil
}
