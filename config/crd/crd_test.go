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

package crd_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/registry/customresource/tableconvertor"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/config/crd"
)

// readCRD decodes the generated CRD of one resource, e.g. "trainjobs".
func readCRD(t *testing.T, plural string) *apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	data, err := fs.ReadFile(crd.Bases, "bases/trainer.kubeflow.org_"+plural+".yaml")
	if err != nil {
		t.Fatal(err)
	}
	out := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.UnmarshalStrict(data, out); err != nil {
		t.Fatal(err)
	}
	if len(out.Spec.Versions) != 1 {
		t.Fatalf("%s: want one version, got %d", plural, len(out.Spec.Versions))
	}
	return out
}

// column is what `kubectl get` makes of a printer column (descriptions are checked apart).
type column struct {
	Name     string
	Type     string
	JSONPath string
	Priority int32
}

// TestNamesAndPrinterColumns pins what `kubectl get` shows and the short names it accepts.
// Kubeflow Trainer v2.3 has no short names and only State and Age columns, and kubeflow/trainer#3963
// adds Suspended (spec.suspend) beside State; neither is part of the wire schema (the SDK and
// Kueue never read them), so the differential tests, which compare admission, are not concerned.
func TestNamesAndPrinterColumns(t *testing.T) {
	node := `.status.jobsStatus[?(@.name=="node")]`
	holds := `.status.conditions[?(@.status=="True")]`
	for _, tc := range []struct {
		plural     string
		shortNames []string
		columns    []column
	}{{
		plural:     "trainjobs",
		shortNames: []string{"tj"},
		columns: []column{
			{Name: "State", Type: "string", JSONPath: holds + ".type"},
			{Name: "Suspended", Type: "boolean", JSONPath: ".spec.suspend"},
			{Name: "Runtime", Type: "string", JSONPath: ".spec.runtimeRef.name"},
			{Name: "Nodes", Type: "integer", JSONPath: ".spec.trainer.numNodes"},
			{Name: "Active", Type: "integer", JSONPath: node + ".active"},
			{Name: "Ready", Type: "integer", JSONPath: node + ".ready"},
			{Name: "Failed", Type: "integer", JSONPath: node + ".failed"},
			{Name: "Progress", Type: "integer", JSONPath: ".status.trainerStatus.progressPercentage"},
			{Name: "ETA", Type: "integer", JSONPath: ".status.trainerStatus.estimatedRemainingSeconds"},
			{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
			{Name: "Message", Type: "string", JSONPath: holds + ".message", Priority: 1},
		},
	}, {
		plural:     "trainingruntimes",
		shortNames: []string{"tr", "trt"},
	}, {
		plural:     "clustertrainingruntimes",
		shortNames: []string{"ctr"},
	}} {
		t.Run(tc.plural, func(t *testing.T) {
			c := readCRD(t, tc.plural)
			if diff := cmp.Diff(tc.shortNames, c.Spec.Names.ShortNames); diff != "" {
				t.Errorf("short names (-want +got):\n%s", diff)
			}
			var got []column
			for _, col := range c.Spec.Versions[0].AdditionalPrinterColumns {
				got = append(got, column{Name: col.Name, Type: col.Type, JSONPath: col.JSONPath, Priority: col.Priority})
				if col.Description == "" {
					t.Errorf("column %s has no description (kubectl explain and API clients show it)", col.Name)
				}
			}
			if diff := cmp.Diff(tc.columns, got); diff != "" {
				t.Errorf("printer columns (-want +got):\n%s", diff)
			}
			// The apiserver refuses a CRD whose column it cannot parse; check it as it would.
			if _, err := tableconvertor.New(c.Spec.Versions[0].AdditionalPrinterColumns); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestShortNamesAreFree keeps the short names away from those of Kubernetes itself and of
// projects often installed next to Gantry. kubectl resolves a taken short name to the resource
// discovery lists first and only warns about the other, so a clash makes `kubectl get` (and
// `kubectl delete`) act on another project's objects. The one clash kept is TrainingRuntime's
// "tr", which the command-line issue asks for and Tekton's TaskRun has too: TrainingRuntime
// also answers to "trt", and docs/practitioner.md says to use it next to Tekton.
func TestShortNamesAreFree(t *testing.T) {
	taken := map[string]string{
		// kubectl api-resources of a plain cluster
		"cm": "configmaps", "cs": "componentstatuses", "csr": "certificatesigningrequests",
		"crd": "customresourcedefinitions", "crds": "customresourcedefinitions", "cj": "cronjobs",
		"deploy": "deployments", "ds": "daemonsets", "ep": "endpoints", "ev": "events",
		"hpa": "horizontalpodautoscalers", "ing": "ingresses", "limits": "limitranges",
		"netpol": "networkpolicies", "no": "nodes", "ns": "namespaces", "pc": "priorityclasses",
		"pdb": "poddisruptionbudgets", "po": "pods", "pv": "persistentvolumes",
		"pvc": "persistentvolumeclaims", "quota": "resourcequotas", "rc": "replicationcontrollers",
		"rs": "replicasets", "sa": "serviceaccounts", "sc": "storageclasses", "sts": "statefulsets",
		"svc": "services",
		// Tekton (Kubeflow Pipelines on Tekton, OpenShift Pipelines) and Knative (KServe)
		"tr": "taskruns.tekton.dev", "trs": "taskruns.tekton.dev", "rt": "routes.serving.knative.dev",
		// Kueue v0.19, scheduler-plugins, LeaderWorkerSet, Spark operator
		"ac": "admissionchecks.kueue.x-k8s.io", "co": "cohorts.kueue.x-k8s.io",
		"cq": "clusterqueues.kueue.x-k8s.io", "lq": "localqueues.kueue.x-k8s.io",
		"kwl": "workloads.kueue.x-k8s.io", "rf": "resourceflavors.kueue.x-k8s.io",
		"pg": "podgroups.scheduling.x-k8s.io", "eq": "elasticquotas.scheduling.x-k8s.io",
		"lws":      "leaderworkersets.leaderworkerset.x-k8s.io",
		"sparkapp": "sparkapplications.sparkoperator.k8s.io",
	}
	ours := map[string]string{}
	for _, plural := range []string{"trainjobs", "trainingruntimes", "clustertrainingruntimes"} {
		c := readCRD(t, plural)
		for _, name := range append([]string{c.Spec.Names.Plural, c.Spec.Names.Singular}, c.Spec.Names.ShortNames...) {
			if other, ok := ours[name]; ok {
				t.Errorf("%q names both %s and %s", name, other, plural)
			}
			ours[name] = plural
		}
		for _, s := range c.Spec.Names.ShortNames {
			if other, ok := taken[s]; ok && (s != "tr" || plural != "trainingruntimes") {
				t.Errorf("short name %q of %s is taken by %s", s, plural, other)
			}
		}
	}
}

// TestChartCRDsAreTheGenerated checks that the chart installs the generated CRDs, less their
// descriptions (make manifests writes them so: a Helm release Secret holds at most 1 MiB), and
// nothing else differs.
func TestChartCRDsAreTheGenerated(t *testing.T) {
	want := map[string]any{}
	bases, err := fs.Glob(crd.Bases, "bases/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range bases {
		data, err := fs.ReadFile(crd.Bases, f)
		if err != nil {
			t.Fatal(err)
		}
		want[filepath.Base(f)] = withoutDescriptions(t, data)
	}
	chart, err := filepath.Glob(filepath.Join("..", "..", "charts", "gantry", "files", "crds", "*"))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{}
	for _, f := range chart {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got[filepath.Base(f)] = withoutDescriptions(t, data)
	}
	if len(want) != 4 {
		t.Fatalf("want the 4 trainer.kubeflow.org CRDs in config/crd/bases, got %d", len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("charts/gantry/files/crds differs from config/crd/bases without descriptions; run 'make manifests' (-bases +chart):\n%s", diff)
	}
}

func decodeYAML(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// withoutDescriptions is a CRD with every description removed (controller-gen's maxDescLen=0
// keeps the printer columns').
func withoutDescriptions(t *testing.T, data []byte) any {
	t.Helper()
	var strip func(v any) any
	strip = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := map[string]any{}
			for k, e := range v {
				// A schema's description is a string; a property named description is not.
				if _, text := e.(string); k == "description" && text {
					continue
				}
				out[k] = strip(e)
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = strip(e)
			}
			return out
		}
		return v
	}
	return strip(decodeYAML(t, data))
}

// TestTrainJobColumnValues prints sample TrainJobs with the apiserver's own table convertor for
// the generated columns: the code behind `kubectl get` (server-side printing), which evaluates
// each JSONPath with k8s.io/client-go/util/jsonpath, missing keys allowed, and shows the first
// result. Cells are rendered as kubectl renders them: nothing for a missing value.
func TestTrainJobColumnValues(t *testing.T) {
	c := readCRD(t, "trainjobs")
	conv, err := tableconvertor.New(c.Spec.Versions[0].AdditionalPrinterColumns)
	if err != nil {
		t.Fatal(err)
	}
	counts := func(name string, active, ready, succeeded, failed, suspended int32) trainer.JobStatus {
		return trainer.JobStatus{Name: name, Active: ptr.To(active), Ready: ptr.To(ready),
			Succeeded: ptr.To(succeeded), Failed: ptr.To(failed), Suspended: ptr.To(suspended)}
	}
	condition := func(typ string, status metav1.ConditionStatus, reason, message string) metav1.Condition {
		return metav1.Condition{Type: typ, Status: status, Reason: reason, Message: message,
			LastTransitionTime: metav1.Now()}
	}
	// The schema defaults suspend to false, so every stored TrainJob has it.
	job := func(name string, numNodes *int32, status trainer.TrainJobStatus) *trainer.TrainJob {
		suspended := false
		for _, c := range status.Conditions {
			suspended = suspended || c.Type == trainer.TrainJobSuspended && c.Status == metav1.ConditionTrue
		}
		return &trainer.TrainJob{
			TypeMeta:   metav1.TypeMeta{APIVersion: trainer.GroupVersion.String(), Kind: trainer.TrainJobKind},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "team-a", CreationTimestamp: metav1.Now()},
			Spec: trainer.TrainJobSpec{
				RuntimeRef: trainer.RuntimeRef{Name: "torch-distributed"},
				Trainer:    &trainer.Trainer{NumNodes: numNodes},
				Suspend:    ptr.To(suspended),
			},
			Status: status,
		}
	}
	failedMessage := "jobset failed due to one or more job failures (first failed job: mnist-ddp-node-0)"

	headers := []string{"Name", "State", "Suspended", "Runtime", "Nodes", "Active", "Ready", "Failed", "Progress", "ETA", "Age", "Message"}
	for _, tc := range []struct {
		name string
		job  *trainer.TrainJob
		want []string // every cell but Age
	}{{
		name: "created, no status yet",
		job:  job("created", nil, trainer.TrainJobStatus{}),
		want: []string{"created", "", "false", "torch-distributed", "", "", "", "", "", "", ""},
	}, {
		name: "running after a resume, with an initializer before the nodes and progress reported",
		job: job("running", ptr.To[int32](2), trainer.TrainJobStatus{
			Conditions: []metav1.Condition{condition(trainer.TrainJobSuspended, metav1.ConditionFalse,
				trainer.TrainJobResumedReason, trainer.TrainJobResumedMessage)},
			JobsStatus: []trainer.JobStatus{
				counts("dataset-initializer", 0, 0, 1, 0, 0),
				counts("node", 2, 2, 0, 0, 0),
			},
			TrainerStatus: &trainer.TrainJobTrainerStatus{ProgressPercentage: ptr.To[int32](42),
				EstimatedRemainingSeconds: ptr.To[int32](795), LastUpdatedTime: metav1.Now()},
		}),
		want: []string{"running", "", "false", "torch-distributed", "2", "2", "2", "0", "42", "795", ""},
	}, {
		name: "suspended",
		job: job("queued", ptr.To[int32](2), trainer.TrainJobStatus{
			Conditions: []metav1.Condition{condition(trainer.TrainJobSuspended, metav1.ConditionTrue,
				trainer.TrainJobSuspendedReason, trainer.TrainJobSuspendedMessage)},
			JobsStatus: []trainer.JobStatus{counts("node", 0, 0, 0, 0, 1)},
		}),
		want: []string{"queued", "Suspended", "true", "torch-distributed", "2", "0", "0", "0", "", "", trainer.TrainJobSuspendedMessage},
	}, {
		name: "failed, after a resume",
		job: job("broken", ptr.To[int32](2), trainer.TrainJobStatus{
			Conditions: []metav1.Condition{
				condition(trainer.TrainJobSuspended, metav1.ConditionFalse, trainer.TrainJobResumedReason, trainer.TrainJobResumedMessage),
				condition(trainer.TrainJobFailed, metav1.ConditionTrue, "FailedJobs", failedMessage),
			},
			JobsStatus: []trainer.JobStatus{counts("node", 0, 0, 0, 1, 0)},
		}),
		want: []string{"broken", "Failed", "false", "torch-distributed", "2", "0", "0", "1", "", "", failedMessage},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			// Through JSON, as the apiserver holds the object: numbers become int64.
			data, err := json.Marshal(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			obj := &unstructured.Unstructured{}
			if err := obj.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
			table, err := conv.ConvertToTable(context.Background(), obj, nil)
			if err != nil {
				t.Fatal(err)
			}
			var gotHeaders []string
			wide := map[string]bool{}
			for _, h := range table.ColumnDefinitions {
				gotHeaders = append(gotHeaders, h.Name)
				wide[h.Name] = h.Priority > 0
			}
			if diff := cmp.Diff(headers, gotHeaders); diff != "" {
				t.Fatalf("headers (-want +got):\n%s", diff)
			}
			if wideOnly := keys(wide); !cmp.Equal(wideOnly, []string{"Message"}) {
				t.Errorf("columns shown only with -o wide: %v, want [Message]", wideOnly)
			}
			if len(table.Rows) != 1 {
				t.Fatalf("want one row, got %d", len(table.Rows))
			}
			cells := table.Rows[0].Cells
			if len(cells) != len(headers) {
				t.Fatalf("want %d cells, got %d: %v", len(headers), len(cells), cells)
			}
			var got []string
			for i, cell := range cells {
				switch {
				case headers[i] == "Age":
					if cell == nil || cell == "" || cell == "<invalid>" {
						t.Errorf("Age: got %v", cell)
					}
				case cell == nil:
					got = append(got, "")
				default:
					got = append(got, fmt.Sprint(cell))
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("cells but Age (-want +got):\n%s", diff)
			}
		})
	}
}

// keys returns the sorted keys whose value is true.
func keys(m map[string]bool) []string {
	var out []string
	for k, v := range m {
		if v {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}
