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

// Package cert rotates the webhook serving certificate in-process and tells the rest of the
// manager when it is ready.
package cert

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
)

// Names the rotator uses; the install manifests must agree.
const (
	caName                   = "kubeflow-trainer-ca"
	caOrganization           = "kubeflow-trainer"
	MutatingWebhookConfig    = "defaulter.trainer.kubeflow.org"
	ValidatingWebhookConfig  = "validator.trainer.kubeflow.org"
	DefaultOperatorNamespace = "kubeflow-system"
	serviceAccountNamespace  = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"
)

// OperatorNamespace is the namespace the manager runs in: its service account's, else
// kubeflow-system.
func OperatorNamespace() string {
	if data, err := os.ReadFile(serviceAccountNamespace); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return DefaultOperatorNamespace
}

// The rotator caches the Secret and the two webhook configurations alone (narrow.go) and
// updates them; reading the Secret (get, list, watch) and creating it (EnsureSecret) fall under
// the cluster-wide Secret rule of the TrainJob controller. The names are the installed ones
// (config/webhook); the chart renders the configured Secret name.
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=mutatingwebhookconfigurations,resourceNames=defaulter.trainer.kubeflow.org,verbs=list;watch;update
// +kubebuilder:rbac:groups=admissionregistration.k8s.io,resources=validatingwebhookconfigurations,resourceNames=validator.trainer.kubeflow.org,verbs=list;watch;update
// +kubebuilder:rbac:groups="",namespace=kubeflow-system,resources=secrets,resourceNames=kubeflow-trainer-webhook-cert,verbs=update

// Options configure the rotation.
type Options struct {
	Namespace   string
	ServiceName string
	SecretName  string
	CertDir     string
}

// AddRotator keeps a CA and a serving certificate for <service>.<namespace>.svc in the Secret,
// writes them to CertDir, and injects the CA into both webhook configurations. ready is closed
// once the certificate is on disk. Every replica serves webhooks, so rotation does not wait for
// leader election. The rotator reads the Secret and the two configurations alone (narrow.go).
func AddRotator(mgr ctrl.Manager, o Options, ready chan struct{}) error {
	if o.Namespace == "" || o.ServiceName == "" || o.SecretName == "" {
		return errors.New("cert.AddRotator: namespace, service and secret names are required")
	}
	certDir := o.CertDir
	if certDir == "" {
		return errors.New("cert.AddRotator: a certificate directory is required")
	}
	return rotator.AddRotator(narrowedManager(mgr, rotatorObjects(o)), &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: o.Namespace, Name: o.SecretName},
		CertDir:        certDir,
		CAName:         caName,
		CAOrganization: caOrganization,
		DNSName:        fmt.Sprintf("%s.%s.svc", o.ServiceName, o.Namespace),
		IsReady:        ready,
		Webhooks: []rotator.WebhookInfo{
			{Type: rotator.Validating, Name: ValidatingWebhookConfig},
			{Type: rotator.Mutating, Name: MutatingWebhookConfig},
		},
		RequireLeaderElection: false,
	})
}

// ReadyCheck fails with "certificates are not ready" until ready is closed, then defers to
// started (the webhook server's check).
func ReadyCheck(ready <-chan struct{}, started healthz.Checker) healthz.Checker {
	return func(req *http.Request) error {
		select {
		case <-ready:
			return started(req)
		default:
			return errors.New("certificates are not ready")
		}
	}
}

// EnsureSecret creates the empty certificate Secret when the install did not: the rotator fills
// a Secret but will not create one.
func EnsureSecret(ctx context.Context, c client.Client, namespace, name string) error {
	secret := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
	if err := c.Create(ctx, secret); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating the webhook certificate Secret %s/%s: %w", namespace, name, err)
	}
	return nil
}
