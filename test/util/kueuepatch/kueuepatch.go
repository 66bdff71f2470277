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

// Package kueuepatch holds Kueue's writes to TrainJobs as cases (cases.yaml) with the answers
// Kubeflow Trainer v2.3.0 gives them, and sends them to an apiserver. The webhook integration
// suite runs them against Gantry, the differential module against the reference, so both are
// held to one table.
package kueuepatch

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

//go:embed cases.yaml
var casesYAML []byte

// Cases is the file: one runtime every case uses, and the cases.
type Cases struct {
	Runtime map[string]any `json:"runtime"`
	Cases   []Case         `json:"cases"`
}

// Case is a TrainJob and the writes sent to it, in order.
type Case struct {
	Name     string         `json:"name"`
	TrainJob map[string]any `json:"trainJob"`
	Steps    []Step         `json:"steps"`
}

// Step is one write (Update or MergePatch) or a change of the JobSet's active Jobs.
type Step struct {
	Update     map[string]any `json:"update,omitempty"`
	MergePatch map[string]any `json:"mergePatch,omitempty"`
	// JobSet maps replicated job names to their active Jobs.
	JobSet map[string]int64 `json:"jobSet,omitempty"`
	// Refused is the expected error of the write, with lines folded; empty means accepted.
	Refused string `json:"refused,omitempty"`
}

// Load returns the cases.
func Load() (*Cases, error) {
	c := &Cases{}
	if err := yaml.UnmarshalStrict(casesYAML, c); err != nil {
		return nil, fmt.Errorf("kueuepatch: cases.yaml: %w", err)
	}
	return c, nil
}

// Object returns a copy of an object of the file in namespace ns.
func Object(obj map[string]any, ns string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
	u.SetNamespace(ns)
	return u
}

// Send makes one write step on the TrainJob key and returns the apiserver's answer; with
// dryRun the apiserver and the webhooks answer without storing anything.
func (s Step) Send(ctx context.Context, c client.Client, key types.NamespacedName, dryRun bool) error {
	var updateOpts []client.UpdateOption
	var patchOpts []client.PatchOption
	if dryRun {
		updateOpts, patchOpts = append(updateOpts, client.DryRunAll), append(patchOpts, client.DryRunAll)
	}
	current := &unstructured.Unstructured{}
	current.SetAPIVersion("trainer.kubeflow.org/v1alpha1")
	current.SetKind("TrainJob")
	if err := c.Get(ctx, key, current); err != nil {
		return fmt.Errorf("kueuepatch: reading the TrainJob: %w", err)
	}
	switch {
	case s.Update != nil:
		base, err := json.Marshal(current.Object)
		if err != nil {
			return err
		}
		patch, err := json.Marshal(s.Update)
		if err != nil {
			return err
		}
		merged, err := jsonpatch.MergePatch(base, patch)
		if err != nil {
			return err
		}
		updated := &unstructured.Unstructured{}
		if err := updated.UnmarshalJSON(merged); err != nil {
			return err
		}
		return c.Update(ctx, updated, updateOpts...)
	case s.MergePatch != nil:
		patch := runtime.DeepCopyJSON(s.MergePatch)
		// Kueue's strict patches carry the resourceVersion they were computed from.
		patch["metadata"] = map[string]any{"resourceVersion": current.GetResourceVersion()}
		data, err := json.Marshal(patch)
		if err != nil {
			return err
		}
		return c.Patch(ctx, current, client.RawPatch(types.MergePatchType, data), patchOpts...)
	}
	return fmt.Errorf("kueuepatch: step is neither update nor mergePatch")
}

// Answer folds an error the way Refused is written: "" when accepted, else its text with runs
// of whitespace as one space.
func Answer(err error) string {
	if err == nil {
		return ""
	}
	return Fold(err.Error())
}

// Fold joins the lines of a folded YAML string.
func Fold(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// SetJobSet creates the TrainJob's JobSet, owned by it, if it is missing, and writes a status
// with these active Jobs per replicated job, in name order (both implementations report them
// in status order).
func SetJobSet(ctx context.Context, c client.Client, tj *unstructured.Unstructured, active map[string]int64) error {
	js := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "jobset.x-k8s.io/v1alpha2",
		"kind":       "JobSet",
		"metadata": map[string]any{
			"name": tj.GetName(), "namespace": tj.GetNamespace(),
			"ownerReferences": []any{map[string]any{
				"apiVersion": "trainer.kubeflow.org/v1alpha1", "kind": "TrainJob", "name": tj.GetName(),
				"uid": string(tj.GetUID()), "controller": true, "blockOwnerDeletion": true,
			}},
		},
		"spec": map[string]any{"replicatedJobs": []any{map[string]any{
			"name": "node", "replicas": int64(1),
			"template": map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
				"restartPolicy": "Never",
				"containers":    []any{map[string]any{"name": "node", "image": "pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime"}},
			}}}},
		}}},
	}}
	if err := c.Create(ctx, js); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("kueuepatch: creating the JobSet: %w", err)
	}
	if err := c.Get(ctx, client.ObjectKeyFromObject(js), js); err != nil {
		return err
	}
	var statuses []any
	for _, name := range slices.Sorted(maps.Keys(active)) {
		statuses = append(statuses, map[string]any{
			"name": name, "ready": int64(0), "succeeded": int64(0), "failed": int64(0),
			"active": active[name], "suspended": int64(0),
		})
	}
	js.Object["status"] = map[string]any{"replicatedJobsStatus": statuses}
	return c.Status().Update(ctx, js)
}

// Specs registers one spec per case. Each sends its steps in order; before each write the same
// write is sent as a dry run until it gets the expected answer, so a webhook whose cache has not
// seen the last JobSet change yet is waited for instead of judged, and then the write itself
// must get that answer.
func Specs(c func() client.Client, newNamespace func() string) {
	cases, err := Load()
	if err != nil {
		ginkgo.Fail(err.Error())
	}
	for _, tc := range cases.Cases {
		ginkgo.It(tc.Name, func(ctx ginkgo.SpecContext) {
			cl, ns := c(), newNamespace()
			gomega.Expect(cl.Create(ctx, Object(cases.Runtime, ns))).To(gomega.Succeed())
			tj := Object(tc.TrainJob, ns)
			// A webhook may read the runtime from a cache that has not seen it yet.
			gomega.Eventually(func() error { return cl.Create(ctx, tj) }).WithTimeout(10 * time.Second).Should(gomega.Succeed())
			key := client.ObjectKeyFromObject(tj)
			for i, step := range tc.Steps {
				if step.JobSet != nil {
					gomega.Expect(SetJobSet(ctx, cl, tj, step.JobSet)).To(gomega.Succeed(), "step %d", i)
					continue
				}
				want := Fold(step.Refused)
				gomega.Eventually(func() string { return Answer(step.Send(ctx, cl, key, true)) }).
					WithTimeout(10*time.Second).Should(gomega.Equal(want), "step %d, dry run", i)
				gomega.Expect(Answer(step.Send(ctx, cl, key, false))).To(gomega.Equal(want), "step %d", i)
			}
		})
	}
}
