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

package webhook

import (
	"github.com/onsi/ginkgo/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/gantry-ml/gantry/test/util/kueuepatch"
)

// Kueue v0.19.2's writes, answered as Kubeflow Trainer v2.3.0 answers them (the differential
// module runs the same cases against the reference).
var _ = ginkgo.Describe("Kueue's runtime patch writes", func() {
	kueuepatch.Specs(func() client.Client { return k8sClient }, newNamespace)
})
