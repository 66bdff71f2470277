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

package install

import (
	"github.com/onsi/ginkgo/v2"
	"github.com/onsi/gomega"
	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
)

// renderedHook returns the rendered Job with the given helm.sh/hook annotation.
func renderedHook(objs []*unstructured.Unstructured, hook string) *batchv1.Job {
	for _, o := range objs {
		if o.GetKind() == "Job" && o.GetAnnotations()["helm.sh/hook"] == hook {
			job := &batchv1.Job{}
			fromUnstructured(o, job)
			return job
		}
	}
	ginkgo.Fail("the chart renders no Job with helm.sh/hook " + hook)
	return nil
}

// renderedConfigMaps resolves ConfigMap names among rendered objects.
func renderedConfigMaps(objs []*unstructured.Unstructured) func(string) map[string]string {
	return func(name string) map[string]string {
		for _, o := range objs {
			if o.GetKind() == "ConfigMap" && o.GetName() == name {
				data, _, err := unstructured.NestedStringMap(o.Object, "data")
				gomega.Expect(err).NotTo(gomega.HaveOccurred())
				return data
			}
		}
		ginkgo.Fail("the chart renders no ConfigMap " + name)
		return nil
	}
}

// runtimeExists reports whether the named ClusterTrainingRuntime exists.
func runtimeExists(name string) bool {
	err := k8sClient.Get(ctx, client.ObjectKey{Name: name}, &trainer.ClusterTrainingRuntime{})
	gomega.Expect(client.IgnoreNotFound(err)).To(gomega.Succeed())
	return err == nil
}
