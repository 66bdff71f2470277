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

package runtimeinstall

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/gantry-ml/gantry/internal/manifest"
)

const torch = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: torch-distributed
  labels: {owner: me}
`

const jax = `apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata:
  name: jax-distributed
`

func TestRead(t *testing.T) {
	cases := map[string]struct {
		files     map[string]string
		wantNames []string
		wantErr   string
	}{
		"one runtime per file, in file name order": {
			files:     map[string]string{"b.yaml": torch, "a.yaml": jax, "notes.txt": "ignored"},
			wantNames: []string{"jax-distributed", "torch-distributed"},
		},
		"several documents in one file": {
			files:     map[string]string{"all.yaml": torch + "---\n" + jax},
			wantNames: []string{"torch-distributed", "jax-distributed"},
		},
		"hidden entries of a mounted ConfigMap are skipped": {
			files:     map[string]string{"a.yaml": jax, ".hidden.yaml": "not: [yaml"},
			wantNames: []string{"jax-distributed"},
		},
		"an empty directory installs nothing": {},
		"another kind is refused": {
			files:   map[string]string{"a.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"},
			wantErr: `a.yaml: /v1, Kind=ConfigMap "x" is not a trainer.kubeflow.org/v1alpha1, Kind=ClusterTrainingRuntime`,
		},
		"a name given twice is refused": {
			files:   map[string]string{"a.yaml": jax, "b.yaml": jax},
			wantErr: `b.yaml: runtime name "jax-distributed" is empty or given twice`,
		},
		"malformed YAML is refused": {
			files:   map[string]string{"a.yaml": "kind: [ClusterTrainingRuntime"},
			wantErr: "a.yaml: ",
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for f, data := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte(data), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			objs, err := Read(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Read() error = %v, want one containing %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantNames, names(objs)); diff != "" {
				t.Errorf("runtimes (-want,+got):\n%s", diff)
			}
		})
	}
}

// TestInstallRefuses covers the checks made before the cluster is touched (the client is nil).
func TestInstallRefuses(t *testing.T) {
	objs, err := manifest.Decode([]byte(torch + "---\n" + jax))
	if err != nil {
		t.Fatal(err)
	}
	cases := map[string]struct {
		selector string
		want     string
	}{
		"an empty selector would match every runtime": {
			want: "a non-empty --selector is required: it names the runtimes this installation owns",
		},
		"a runtime without the selector's labels could never be pruned": {
			selector: "owner=me",
			want:     `clustertrainingruntime jax-distributed lacks the labels of the selector "owner=me": it could never be removed`,
		},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			sel, err := labels.Parse(tc.selector)
			if err != nil {
				t.Fatal(err)
			}
			err = (&Installer{}).Install(context.Background(), objs, sel)
			if diff := cmp.Diff(tc.want, errString(err)); diff != "" {
				t.Errorf("Install() error (-want,+got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff(errString(checkSelector(labels.Everything())), errString((&Installer{}).Uninstall(context.Background(), labels.Everything()))); diff != "" {
		t.Errorf("Uninstall() with an empty selector (-want,+got):\n%s", diff)
	}
}

func TestIgnoreTransient(t *testing.T) {
	gr := schema.GroupResource{Group: "trainer.kubeflow.org", Resource: "clustertrainingruntimes"}
	gk := schema.GroupKind{Group: "trainer.kubeflow.org", Kind: "ClusterTrainingRuntime"}
	cases := map[string]struct {
		err       error
		transient bool
	}{
		"resource not served yet": {err: apierrors.NewNotFound(gr, ""), transient: true},
		"kind not mapped yet":     {err: &meta.NoKindMatchError{GroupKind: gk}, transient: true},
		"apiserver unavailable":   {err: apierrors.NewServiceUnavailable("starting"), transient: true},
		"throttled":               {err: apierrors.NewTooManyRequests("slow down", 1), transient: true},
		"invalid runtime":         {err: apierrors.NewInvalid(gk, "x", nil)},
		"forbidden":               {err: apierrors.NewForbidden(gr, "x", errors.New("no RBAC"))},
		"anything else is final":  {err: errors.New("boom")},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := ignoreTransient(tc.err) == nil; got != tc.transient {
				t.Errorf("ignoreTransient(%v) == nil is %v, want %v", tc.err, got, tc.transient)
			}
		})
	}
}

func names(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
