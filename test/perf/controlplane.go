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

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cert"
	"github.com/gantry-ml/gantry/internal/scheme"
	fwk "github.com/gantry-ml/gantry/test/integration/framework"
	"github.com/gantry-ml/gantry/test/util"
)

// managerUser is the identity the manager authenticates as; the audit policy records the writes
// of this user only, which is how they are told apart from the harness's own.
const managerUser = "gantry-manager"

// Names the harness uses in the cluster.
const (
	benchNamespace    = "bench"
	warmupNamespace   = "bench-warmup"
	operatorNamespace = cert.DefaultOperatorNamespace
	runtimeName       = "torch-distributed"
	runtimeFile       = "config/runtimes/torch-distributed.yaml"
)

// auditPolicy records, without bodies, every write the manager makes and every TrainJob create
// (whose timestamps cut the way to a JobSet into stages), and nothing else.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  users: [` + managerUser + `]
  verbs: [create, update, patch, delete, deletecollection]
- level: Metadata
  verbs: [create]
  resources: [{group: trainer.kubeflow.org, resources: [trainjobs]}]
- level: None
`

// controlPlane is one envtest kube-apiserver and etcd with Gantry's and JobSet's CRDs and
// Gantry's webhook configurations as installed, pointing at a loopback port with envtest's
// certificate: every TrainJob create goes through the manager's webhooks, as in a cluster.
type controlPlane struct {
	env        *envtest.Environment
	config     *rest.Config
	scheme     *apiruntime.Scheme
	client     client.Client
	dir        string
	auditLog   string
	kubeconfig string
}

// startControlPlane starts a fresh control plane; dir receives the audit log and kubeconfig.
// Without webhooks nothing serves admission, so baselines (the floor creates TrainJobs with no
// manager running) get none registered.
func startControlPlane(dir string, webhooks bool) (*controlPlane, error) {
	assets, err := util.EnvtestAssets()
	if err != nil {
		return nil, err
	}
	jobset, err := util.ModuleDir("sigs.k8s.io/jobset")
	if err != nil {
		return nil, err
	}
	cp := &controlPlane{dir: dir, auditLog: filepath.Join(dir, "audit.log")}
	if cp.scheme, err = scheme.New(); err != nil {
		return nil, err
	}
	policy := filepath.Join(dir, "audit-policy.yaml")
	if err := os.WriteFile(policy, []byte(auditPolicy), 0o600); err != nil {
		return nil, err
	}
	cp.env = &envtest.Environment{
		BinaryAssetsDirectory: assets,
		CRDDirectoryPaths: []string{
			filepath.Join(util.RepoRoot(), "config", "crd", "bases"),
			filepath.Join(jobset, "config", "components", "crd", "bases"),
		},
		ErrorIfCRDPathMissing: true,
		Scheme:                cp.scheme,
	}
	if webhooks {
		if cp.env.WebhookInstallOptions, err = fwk.WebhookInstallOptions(); err != nil {
			return nil, fmt.Errorf("reading the webhook manifests: %w", err)
		}
	}
	api := cp.env.ControlPlane.GetAPIServer().Configure()
	api.Set("audit-policy-file", policy)
	api.Set("audit-log-path", cp.auditLog)
	api.Set("audit-log-format", "json")
	api.Set("audit-log-mode", "blocking")
	if cp.config, err = cp.env.Start(); err != nil {
		return nil, fmt.Errorf("starting envtest: %w", err)
	}
	if err := cp.setUp(webhooks); err != nil {
		_ = cp.stop()
		return nil, err
	}
	return cp, nil
}

// setUp creates the admin client, the manager's kubeconfig, the namespaces, the webhook
// certificate Secret (when webhooks are served) and the torch runtime.
func (cp *controlPlane) setUp(webhooks bool) error {
	var err error
	if cp.client, err = cp.newClient(unlimited); err != nil {
		return err
	}
	user, err := cp.env.ControlPlane.AddUser(envtest.User{Name: managerUser, Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return fmt.Errorf("adding the manager's user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return err
	}
	cp.kubeconfig = filepath.Join(cp.dir, "kubeconfig")
	if err := os.WriteFile(cp.kubeconfig, data, 0o600); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, ns := range []string{benchNamespace, warmupNamespace, operatorNamespace} {
		if err := cp.client.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}); err != nil {
			return fmt.Errorf("creating namespace %s: %w", ns, err)
		}
	}
	if webhooks {
		if err := cp.createCertSecret(ctx); err != nil {
			return err
		}
	}
	rt, err := readRuntime()
	if err != nil {
		return err
	}
	return cp.client.Create(ctx, rt)
}

// createCertSecret stores envtest's webhook certificate and CA where an install with
// certManagement off keeps them (the TrainJobStatus feature reads ca.crt from it).
func (cp *controlPlane) createCertSecret(ctx context.Context) error {
	o := cp.env.WebhookInstallOptions
	secret := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "kubeflow-trainer-webhook-cert"},
		Data:       map[string][]byte{"ca.crt": o.LocalServingCAData},
	}
	for _, key := range []string{"tls.crt", "tls.key"} {
		data, err := os.ReadFile(filepath.Join(o.LocalServingCertDir, key))
		if err != nil {
			return fmt.Errorf("reading the envtest serving certificate: %w", err)
		}
		secret.Data[key] = data
	}
	return cp.client.Create(ctx, secret)
}

func readRuntime() (*trainer.ClusterTrainingRuntime, error) {
	data, err := os.ReadFile(filepath.Join(util.RepoRoot(), runtimeFile))
	if err != nil {
		return nil, err
	}
	rt := &trainer.ClusterTrainingRuntime{}
	if err := yaml.UnmarshalStrict(data, rt); err != nil {
		return nil, fmt.Errorf("%s: %w", runtimeFile, err)
	}
	return rt, nil
}

// newClient returns an administrator client with the given client-side rate limits.
func (cp *controlPlane) newClient(l limits) (client.WithWatch, error) {
	cfg := rest.CopyConfig(cp.config)
	cfg.QPS, cfg.Burst = l.QPS, l.Burst
	return client.NewWithWatch(cfg, client.Options{Scheme: cp.scheme})
}

// webhookServing returns the port and certificate directory envtest registered the webhooks with.
func (cp *controlPlane) webhookServing() (port int, certDir string) {
	o := cp.env.WebhookInstallOptions
	return o.LocalServingPort, o.LocalServingCertDir
}

// processCPU returns the CPU seconds kube-apiserver and etcd have used so far.
func (cp *controlPlane) processCPU() float64 {
	total := 0.0
	for _, pid := range childPIDs(os.Getpid(), "kube-apiserver", "etcd") {
		if s, err := readProcStat(pid); err == nil {
			total += s.CPUSeconds
		}
	}
	return total
}

// cpuProfile records a CPU profile of kube-apiserver (its /debug/pprof, open to administrators)
// for d into path, in the background.
func (cp *controlPlane) cpuProfile(ctx context.Context, d time.Duration, path string) <-chan error {
	done := make(chan error, 1)
	go func() {
		cs, err := kubernetes.NewForConfig(cp.config)
		if err != nil {
			done <- err
			return
		}
		data, err := cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
		if err != nil {
			done <- fmt.Errorf("profiling kube-apiserver: %w", err)
			return
		}
		done <- os.WriteFile(path, data, 0o644)
	}()
	return done
}

func (cp *controlPlane) stop() error {
	return cp.env.Stop()
}
