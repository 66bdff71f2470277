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

package trainjobstatus

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/apply"
	"github.com/gantry-ml/gantry/internal/runtime"
	"github.com/gantry-ml/gantry/internal/runtime/core"
	"github.com/gantry-ml/gantry/internal/runtime/framework"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func newPlugin(t *testing.T) *TrainJobStatus {
	t.Helper()
	p, err := New(framework.Options{StatusServerURL: URL("kubeflow-trainer-controller-manager", "kubeflow-system", 10443)})
	if err != nil {
		t.Fatal(err)
	}
	return p.(*TrainJobStatus)
}

func TestNewOptsOutWithoutURL(t *testing.T) {
	p, err := New(framework.Options{})
	if err != nil || p != nil {
		t.Errorf("New(no URL) = %v, %v; want no plugin", p, err)
	}
}

func TestEnforcePodSpec(t *testing.T) {
	injectedEnv := []corev1.EnvVar{
		{Name: EnvServerURL, Value: "https://kubeflow-trainer-controller-manager.kubeflow-system.svc:10443/apis/trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status"},
		{Name: EnvCACert, Value: "/var/run/secrets/kubeflow/trainer/ca.crt"},
		{Name: EnvToken, Value: "/var/run/secrets/kubeflow/trainer/token"},
	}
	injectedMount := corev1.VolumeMount{Name: "kubeflow-trainer-token", MountPath: "/var/run/secrets/kubeflow/trainer", ReadOnly: true}
	injectedVolume := corev1.Volume{Name: "kubeflow-trainer-token", VolumeSource: corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{
		Sources: []corev1.VolumeProjection{
			{ServiceAccountToken: &corev1.ServiceAccountTokenProjection{
				Audience: "trainer.kubeflow.org/v1alpha1/namespaces/ns/trainjobs/job/status", ExpirationSeconds: ptr.To[int64](3600), Path: "token",
			}},
			{ConfigMap: &corev1.ConfigMapProjection{
				LocalObjectReference: corev1.LocalObjectReference{Name: "gantry-status-server-ca"},
				Items:                []corev1.KeyToPath{{Key: "ca.crt", Path: "ca.crt"}},
				Optional:             ptr.To(true),
			}},
		},
	}}}
	withSidecarsAndInit := func(s trainer.TrainingRuntimeSpec) trainer.TrainingRuntimeSpec {
		for i := range s.Template.Spec.ReplicatedJobs {
			pod := &s.Template.Spec.ReplicatedJobs[i].Template.Spec.Template.Spec
			pod.Containers[0].Env = []corev1.EnvVar{{Name: "USER", Value: "kept"}}
			pod.Containers = append(pod.Containers, corev1.Container{Name: "sidecar"})
			pod.InitContainers = []corev1.Container{{Name: "setup"}}
		}
		return s
	}
	cases := map[string]struct {
		spec trainer.TrainingRuntimeSpec
		// wantInjected names the PodSets whose regular containers get the env and mount; every
		// other PodSet, and every init container, stays as it was.
		wantInjected string
		// noCA leaves the CA unknown, with problem as the reason.
		noCA         bool
		problem      string
		wantDisabled []runtime.DisabledFeature
	}{
		"no CA: nothing injected, and the build says why": {
			spec:    utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj(),
			noCA:    true,
			problem: "the webhook certificate Secret kubeflow-system/cert does not exist",
			wantDisabled: []runtime.DisabledFeature{{Name: FeatureProgressReporting, Message: "progress reporting is off for this TrainJob: " +
				"the webhook certificate Secret kubeflow-system/cert does not exist; it is turned on if the CA appears before the TrainJob starts"}},
		},
		"initializers, a trainer with a sidecar, init containers: every trainer container": {
			spec:         withSidecarsAndInit(utiltesting.MakeTrainingRuntimeSpecWrapper().Torch(&trainer.TorchMLPolicySource{}).Obj()),
			wantInjected: "node",
		},
		"no trainer job: nothing": {
			spec: func() trainer.TrainingRuntimeSpec {
				s := withSidecarsAndInit(utiltesting.MakeTrainingRuntimeSpecWrapper().Obj())
				s.Template.Spec.ReplicatedJobs = s.Template.Spec.ReplicatedJobs[:2]
				return s
			}(),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
			obs := &runtime.Observed{StatusServerCA: ca}
			if tc.noCA {
				obs = &runtime.Observed{StatusServerCAProblem: tc.problem}
			}
			info, err := core.NewInfo(tj, "rt", &tc.spec, obs)
			if err != nil {
				t.Fatal(err)
			}
			want, err := core.NewInfo(tj, "rt", &tc.spec, obs)
			if err != nil {
				t.Fatal(err)
			}
			if ps := want.PodSetByName(tc.wantInjected); ps != nil {
				ps.Volumes = append(ps.Volumes, injectedVolume)
				for i := range ps.Containers {
					ps.Containers[i].Env = append(ps.Containers[i].Env, injectedEnv...)
					ps.Containers[i].VolumeMounts = append(ps.Containers[i].VolumeMounts, injectedMount)
				}
			}
			p := newPlugin(t)
			// Twice: a second run must not add anything.
			for range 2 {
				info.Disabled = nil
				if err := p.EnforcePodSpec(info, tj); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(want.PodSets, info.PodSets); diff != "" {
				t.Errorf("PodSets (-want,+got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantDisabled, info.Disabled); diff != "" {
				t.Errorf("disabled features (-want,+got):\n%s", diff)
			}
		})
	}
}

func TestBuild(t *testing.T) {
	tj := utiltesting.MakeTrainJobWrapper("ns", "job").Obj()
	tj.UID = "uid"
	cases := map[string]struct {
		ca         string
		noTrainer  bool
		wantObject *corev1.ConfigMap
	}{
		"the namespace's CA ConfigMap, shared: no owner, Gantry's label": {
			ca: ca,
			wantObject: &corev1.ConfigMap{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
				ObjectMeta: metav1.ObjectMeta{Name: "gantry-status-server-ca", Namespace: "ns",
					Labels: map[string]string{"gantry.dev/status-server-ca": "true"}},
				Data: map[string]string{"ca.crt": ca},
			},
		},
		"no CA read: nothing, the build goes on without progress reporting": {},
		"no trainer job: nothing": {noTrainer: true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			spec := utiltesting.MakeTrainingRuntimeSpecWrapper().Obj()
			if tc.noTrainer {
				spec.Template.Spec.ReplicatedJobs = spec.Template.Spec.ReplicatedJobs[:2]
			}
			info, err := core.NewInfo(tj, "rt", &spec, &runtime.Observed{StatusServerCA: tc.ca})
			if err != nil {
				t.Fatal(err)
			}
			objs, err := newPlugin(t).Build(context.Background(), info, tj)
			if err != nil {
				t.Fatalf("Build() error = %v", err)
			}
			var want []apply.Desired
			if tc.wantObject != nil {
				want = []apply.Desired{{Object: tc.wantObject, Mode: apply.Shared}}
			}
			if diff := cmp.Diff(want, objs); diff != "" {
				t.Errorf("Build() (-want,+got):\n%s", diff)
			}
		})
	}
}
