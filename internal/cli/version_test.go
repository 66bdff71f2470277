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

package cli

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/internal/version"
)

func TestVersion(t *testing.T) {
	clientLine := "Client Version: " + version.String() + "\n"
	public := func(data map[string]string) fixture {
		return fixture{objs: []client.Object{&corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kubeflow-system", Name: "kubeflow-trainer-public"}, Data: data}}}
	}
	installed := public(map[string]string{"kubeflow_trainer_version": "v2.3.0"})
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"--client asks no cluster": {
			cluster: fixture{unreachable: true},
			args:    []string{"version", "--client"},
			want:    result{Stdout: clientLine},
		},
		"the version the installation publishes": {
			cluster: installed,
			args:    []string{"version"},
			want:    result{Stdout: clientLine + "Server Version: v2.3.0 (Kubeflow Trainer API, ConfigMap kubeflow-system/kubeflow-trainer-public)\n"},
		},
		"installed elsewhere: 4": {
			cluster: installed,
			args:    []string{"version", "--trainer-namespace", "ml"},
			want: result{Code: ExitNotFound, Stdout: clientLine,
				Stderr: "error: reading ConfigMap ml/kubeflow-trainer-public: configmaps \"kubeflow-trainer-public\" not found\n"},
		},
		"nothing published: 4": {
			cluster: public(map[string]string{"other": "x"}),
			args:    []string{"version"},
			want: result{Code: ExitNotFound, Stdout: clientLine,
				Stderr: "error: ConfigMap kubeflow-system/kubeflow-trainer-public has no kubeflow_trainer_version\n"},
		},
		"the API server unreachable: 6": {
			cluster: fixture{unreachable: true},
			args:    []string{"version"},
			want: result{Code: ExitUnreachable, Stdout: clientLine,
				Stderr: "error: reading ConfigMap kubeflow-system/kubeflow-trainer-public: Get \"https://127.0.0.1:1/api/v1/namespaces/kubeflow-system/configmaps/kubeflow-trainer-public\": dial tcp 127.0.0.1:1: connect: connection refused\n"},
		},
		"an argument": {
			args: []string{"version", "v2"},
			want: usage(`unknown command "v2" for "gantry version"`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, tc.cluster.run(t, tc.args...))
		})
	}
}
