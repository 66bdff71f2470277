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
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"

	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

// installerLabels are the labels the chart's installer selects its runtimes by.
const installerLabels = "app.kubernetes.io/instance=gantry,app.kubernetes.io/managed-by=gantry-runtime-installer"

func installedRuntime(name string) string {
	return `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: ` + name + `
  labels: {app.kubernetes.io/instance: gantry, app.kubernetes.io/managed-by: gantry-runtime-installer}
spec:
  template:
    spec:
      replicatedJobs:
      - name: node
        template:
          spec:
            template:
              spec:
                containers: [{name: node, image: busybox}]
`
}

// runtimesDir writes one runtime file per document and returns the directory.
func runtimesDir(t *testing.T, docs map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range docs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestRuntimesInstall(t *testing.T) {
	dir := runtimesDir(t, map[string]string{"a.yaml": installedRuntime("jax-distributed"), "b.yaml": installedRuntime("torch-distributed")})
	unlabelled := runtimesDir(t, map[string]string{"a.yaml": installedRuntime("jax-distributed"),
		"b.yaml": "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: ClusterTrainingRuntime\nmetadata: {name: mine}\nspec: {}\n"})
	secret := runtimesDir(t, map[string]string{"a.yaml": "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"})
	// The cluster holds a runtime this installation made and no longer ships, another
	// installation's, and one applied by hand.
	cluster := func() fixture {
		return fixture{objs: []client.Object{
			utiltesting.MakeClusterTrainingRuntimeWrapper("old").Label("app.kubernetes.io/instance", "gantry").
				Label("app.kubernetes.io/managed-by", "gantry-runtime-installer").Obj(),
			utiltesting.MakeClusterTrainingRuntimeWrapper("others").Label("app.kubernetes.io/instance", "other").
				Label("app.kubernetes.io/managed-by", "gantry-runtime-installer").Obj(),
			utiltesting.MakeClusterTrainingRuntimeWrapper("by-hand").Obj(),
		}}
	}
	forbidden := cluster()
	forbidden.funcs = interceptor.Funcs{Apply: func(context.Context, client.WithWatch, runtime.ApplyConfiguration, ...client.ApplyOption) error {
		return apierrors.NewForbidden(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "clustertrainingruntimes"}, "jax-distributed", errors.New("no RBAC"))
	}}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"install applies the directory's runtimes and prunes its own others": {
			args: []string{"runtimes", "install", "--dir", dir, "--selector", installerLabels},
			want: result{Stdout: `clustertrainingruntime/jax-distributed applied
clustertrainingruntime/torch-distributed applied
clustertrainingruntime/old deleted
`},
		},
		"install, flags as the chart's hook gives them": {
			args: []string{"runtimes", "install", "--dir=" + dir, "--selector=" + installerLabels, "--timeout=1m"},
			want: result{Stdout: `clustertrainingruntime/jax-distributed applied
clustertrainingruntime/torch-distributed applied
clustertrainingruntime/old deleted
`},
		},
		"uninstall deletes its own only": {
			args: []string{"runtimes", "uninstall", "--selector", installerLabels},
			want: result{Stdout: "clustertrainingruntime/old deleted\n"},
		},
		"the cluster refuses: 1": {
			cluster: forbidden,
			args:    []string{"runtimes", "install", "--dir", dir, "--selector", installerLabels},
			want: result{Code: exitRefused, Stderr: `gantry runtimes install: applying clustertrainingruntime jax-distributed: clustertrainingruntimes.trainer.kubeflow.org "jax-distributed" is forbidden: no RBAC
`},
		},
		"a runtime without the selector's labels: 1": {
			args: []string{"runtimes", "install", "--dir", unlabelled, "--selector", installerLabels},
			want: result{Code: exitRefused, Stderr: `gantry runtimes install: clustertrainingruntime mine lacks the labels of the selector "` + installerLabels + `": it could never be removed
`},
		},
		"a directory holding something else: 2": {
			args: []string{"runtimes", "install", "--dir", secret, "--selector", installerLabels},
			want: result{Code: ExitUsage, Stderr: "gantry runtimes install: " + filepath.Join(secret, "a.yaml") +
				`: /v1, Kind=Secret "s" is not a trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime` + "\n"},
		},
		"no directory: 2": {
			args: []string{"runtimes", "install", "--dir", filepath.Join(dir, "none"), "--selector", installerLabels},
			want: result{Code: ExitUsage, Stderr: "gantry runtimes install: stat " + filepath.Join(dir, "none") + ": no such file or directory\n"},
		},
		"the cluster unreachable: 1": {
			cluster: fixture{unreachable: true},
			args:    []string{"runtimes", "uninstall", "--selector", installerLabels},
			want: result{Code: exitRefused, Stderr: "gantry runtimes uninstall: listing clustertrainingruntimes \"" + installerLabels +
				"\": Get \"https://127.0.0.1:1/apis/trainer.kubeflow.org/v1alpha1/clustertrainingruntimes?labelSelector=app.kubernetes.io%2Finstance%3Dgantry%2Capp.kubernetes.io%2Fmanaged-by%3Dgantry-runtime-installer\": dial tcp 127.0.0.1:1: connect: connection refused\n"},
		},
		"install without a selector": {
			args: []string{"runtimes", "install", "--dir", dir},
			want: usage("--selector is required"),
		},
		"install without a directory": {
			args: []string{"runtimes", "install", "--selector", "a=b"},
			want: usage("--dir is required"),
		},
		"uninstall takes no directory": {
			args: []string{"runtimes", "uninstall", "--selector", "a=b", "--dir", dir},
			want: usage("unknown flag: --dir"),
		},
		"a bad selector": {
			args: []string{"runtimes", "uninstall", "--selector", "a==="},
			want: usage("--selector: unable to parse requirement: found '=', expected: identifier"),
		},
		"a bad timeout": {
			args: []string{"runtimes", "uninstall", "--selector", "a=b", "--timeout", "soon"},
			want: usage(`invalid argument "soon" for "--timeout" flag: time: invalid duration "soon"`),
		},
		"an argument": {
			args: []string{"runtimes", "install", "--selector", "a=b", dir},
			want: usage(`unexpected argument "` + dir + `": gantry runtimes install takes flags only (see --help)`),
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			c := tc.cluster
			if c.objs == nil && !c.unreachable {
				c = cluster()
			}
			checkResult(t, tc.want, c.run(t, tc.args...))
		})
	}
}
