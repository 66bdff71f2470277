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
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/interceptor"
)

// TestListWatch: list -w prints the table, then a row per change that passes the filters; when
// the API server ends the watch it lists and watches again, until the user stops it (exit 0).
func TestListWatch(t *testing.T) {
	watching := func(events ...watch.Event) fixture {
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		return fixture{objs: []client.Object{torchRuntime(), bert()}, ctx: ctx, funcs: interceptor.Funcs{Watch: watchOf(cancel, events...)}}
	}
	cases := map[string]struct {
		cluster fixture
		args    []string
		want    result
	}{
		"a row per change": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: completeJob("bert")},
				watch.Event{Type: watch.Added, Object: failedTrainJob("bad")}),
			args: []string{"list", "-w"},
			want: result{Stdout: `NAME   STATE     RUNTIME             NODES   GPUS   PROGRESS   ETA   AGE
bert   Running   torch-distributed   2       4      -          -     90m
bert   Complete   torch-distributed   2   4   -   -   90m
bad   Failed   torch-distributed   2   4   -   -   90m
`},
		},
		"only the changes that pass --state": {
			cluster: watching(watch.Event{Type: watch.Modified, Object: completeJob("bert")},
				watch.Event{Type: watch.Added, Object: failedTrainJob("bad")}),
			args: []string{"list", "-w", "--state", "Failed", "--no-headers"},
			want: result{Stdout: "bad   Failed   torch-distributed   2   4   -   -   90m\n"},
		},
		"a watch the API server refuses": {
			cluster: fixture{objs: []client.Object{bert()}, funcs: interceptor.Funcs{
				Watch: func(context.Context, client.WithWatch, client.ObjectList, ...client.ListOption) (watch.Interface, error) {
					return nil, apierrors.NewForbidden(schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "trainjobs"}, "", errors.New("no watch"))
				}}},
			args: []string{"list", "-w", "--no-headers"},
			want: result{Code: ExitForbidden, Stdout: "bert   Running   torch-distributed   -   -   -   -   90m\n",
				Stderr: "error: trainjobs.trainer.kubeflow.org is forbidden: no watch\n"},
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			checkResult(t, tc.want, tc.cluster.run(t, tc.args...))
		})
	}
}
