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

// Package trainjobstatus lets training code report progress to the status server: every container
// of the trainer job gets the server's URL, and a projected volume with a service-account token
// only that TrainJob's status route accepts and the CA that signs the server's certificate, read
// from the namespace's ConfigMap gantry-status-server-ca.
package trainjobstatus

import (
	"cmp"
	"context"
	"strconv"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
)

// Name of the plugin.
const Name = "TrainJobStatus"

// What the training code reads: the Kubeflow Python SDK and the Hugging Face Transformers
// callback look for exactly these names and paths.
const (
	EnvServerURL = "KUBEFLOW_TRAINER_SERVER_URL"
	EnvCACert    = "KUBEFLOW_TRAINER_SERVER_CA_CERT"
	EnvToken     = "KUBEFLOW_TRAINER_SERVER_TOKEN"

	VolumeName = "kubeflow-trainer-token"
	MountPath  = "/var/run/secrets/kubeflow/trainer"
	CAKey      = "ca.crt"
	TokenFile  = "token"

	// TokenExpirationSeconds is the lifetime of the projected token; the kubelet renews it.
	TokenExpirationSeconds int64 = 3600

	// CAConfigMapName is the ConfigMap holding the status server's CA in every namespace that
	// runs TrainJobs. One per namespace, not one per TrainJob as in Kubeflow Trainer
	// (<trainjob>-tls-config): a CA is public and the same for every TrainJob, and a copy per
	// TrainJob costs a write per TrainJob.
	CAConfigMapName = "gantry-status-server-ca"
	// CALabel marks the CA ConfigMaps Gantry publishes, to find them after an uninstall.
	CALabel = "gantry.dev/status-server-ca"
)

// Audience is the only audience the status server accepts for the TrainJob namespace/name: a
// token for one TrainJob cannot update another.
func Audience(namespace, name string) string {
	return "trainer.kubeflow.org/v1alpha1/namespaces/" + namespace + "/trainjobs/" + name + "/status"
}

// Path is the status server's route for the TrainJob namespace/name.
func Path(namespace, name string) string {
	return "/apis/" + Audience(namespace, name)
}

// URL returns the builder of the URL training pods post to: the manager's Service in its
// namespace, on the status server's port.
func URL(service, namespace string, port int32) func(tjNamespace, tjName string) string {
	base := "https://" + service + "." + namespace + ".svc:" + strconv.Itoa(int(port))
	return func(tjNamespace, tjName string) string {
		return base + Path(tjNamespace, tjName)
	}
}

// CAConfigMap is the ConfigMap of namespace that holds the status server's CA ca.
func CAConfigMap(namespace, ca string) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name:      CAConfigMapName,
			Namespace: namespace,
			Labels:    map[string]string{CALabel: "true"},
		},
		Data: map[string]string{CAKey: ca},
	}
}

// FeatureProgressReporting names progress reporting among the disabled features of a build.
const FeatureProgressReporting = "ProgressReporting"

// TrainJobStatus injects what training code needs to report progress.
type TrainJobStatus struct {
	url func(namespace, name string) string
}

var (
	_ framework.EnforcePodSpecPlugin   = (*TrainJobStatus)(nil)
	_ framework.ComponentBuilderPlugin = (*TrainJobStatus)(nil)
)

// New creates the plugin, or none when opts carries no status server URL (the TrainJobStatus
// feature gate is off).
func New(opts framework.Options) (framework.Plugin, error) {
	if opts.StatusServerURL == nil {
		return nil, nil
	}
	return &TrainJobStatus{url: opts.StatusServerURL}, nil
}

// Name returns the plugin name.
func (*TrainJobStatus) Name() string { return Name }

// EnforcePodSpec gives every container of the trainer job (init containers excluded) the
// server's environment and the read-only mount of the token and CA volume. A runtime without a
// trainer job gets nothing. Without the CA, progress reporting is an optional feature that cannot
// work: the TrainJob is built without it, and info says why; a later build while the job has not
// started (its JobSet is rewritten until then) adds it once the CA is known.
func (p *TrainJobStatus) EnforcePodSpec(info *runtime.Info, tj *trainer.TrainJob) error {
	ps := info.PodSetByAncestor(runtime.AncestorTrainer)
	if ps == nil {
		return nil
	}
	if info.Observed.StatusServerCA == "" {
		problem := cmp.Or(info.Observed.StatusServerCAProblem, "the status server CA is unknown")
		info.Disable(FeatureProgressReporting, "progress reporting is off for this TrainJob: "+problem+
			"; it is turned on if the CA appears before the TrainJob starts")
		return nil
	}
	ps.Volumes = runtime.UpsertVolumes(ps.Volumes, volume(tj))
	env := []corev1.EnvVar{
		{Name: EnvServerURL, Value: p.url(tj.Namespace, tj.Name)},
		{Name: EnvCACert, Value: MountPath + "/" + CAKey},
		{Name: EnvToken, Value: MountPath + "/" + TokenFile},
	}
	mount := corev1.VolumeMount{Name: VolumeName, MountPath: MountPath, ReadOnly: true}
	for i := range ps.Containers {
		c := &ps.Containers[i]
		c.Env = runtime.UpsertEnv(c.Env, env...)
		c.VolumeMounts = runtime.UpsertVolumeMounts(c.VolumeMounts, mount)
	}
	return nil
}

func volume(tj *trainer.TrainJob) corev1.Volume {
	return corev1.Volume{Name: VolumeName, VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience:          Audience(tj.Namespace, tj.Name),
				ExpirationSeconds: ptr.To(TokenExpirationSeconds),
				Path:              TokenFile,
			}},
			// Optional: a CA ConfigMap deleted under the job costs its progress reports, never
			// its start; the controller publishes it again.
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: CAConfigMapName},
				Items:                []corev1.KeyToPath{{Key: CAKey, Path: CAKey}},
				Optional:             ptr.To(true),
			}},
		},
	}}}
}

// Build lists the namespace's CA ConfigMap, shared: the controller publishes it before the
// build and keeps it current when the CA rotates (the kubelet refreshes projected ConfigMaps in
// running pods); offline renders and local runs show and use it.
func (*TrainJobStatus) Build(_ context.Context, info *runtime.Info, tj *trainer.TrainJob) ([]apply.Desired, error) {
	if info.PodSetByAncestor(runtime.AncestorTrainer) == nil || info.Observed.StatusServerCA == "" {
		return nil, nil
	}
	return []apply.Desired{{Object: CAConfigMap(tj.Namespace, info.Observed.StatusServerCA), Mode: apply.Shared}}, nil
}
