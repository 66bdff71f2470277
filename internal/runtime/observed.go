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

package runtime

import (
	corev1 "k8s.io/api/core/v1"
	nodev1 "k8s.io/api/node/v1"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// Observed is what the cluster provides that the pipeline must know. The caller (the controller,
// the webhook, gantry render) reads it before building or validating, so plugins stay pure; each
// reads only what its path needs, and a zero field means "not read".
type Observed struct {
	// LimitRanges of the TrainJob's namespace: their container defaults fill in missing
	// requests. Read for runtimes with a pod group policy, to size gangs as the pods will be.
	LimitRanges []corev1.LimitRange
	// RuntimeClasses by name: their pod overhead is added to pods that use them.
	RuntimeClasses map[string]*nodev1.RuntimeClass
	// StatusServerCA is the PEM CA bundle the training pods trust for the status server (the
	// ca.crt of the webhook certificate Secret); empty when unknown, which leaves progress
	// reporting out of the build.
	StatusServerCA string
	// StatusServerCAProblem says why StatusServerCA is empty when it was looked for.
	StatusServerCAProblem string
	// JobSet is the TrainJob's existing JobSet; nil when absent or not read.
	JobSet *jobsetv1alpha2.JobSet
	// PriorityClasses are the names of the cluster's PriorityClasses; nil when not read (offline
	// rendering), which skips the checks that need them.
	PriorityClasses map[string]bool
}
