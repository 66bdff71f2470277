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

// Package cached decides what the manager's cache holds of each object (Transform, the transform
// of every informer) and so what a reader of a cached object may rely on. Of every kind the cache
// drops managedFields and kubectl's last-applied configuration, which nothing reads, and runtime
// snapshots share their data.
//
// The JobSet contract. The pod templates are most of a JobSet's size, and a replicated job
// is about 1.2 KiB of memory even without them, so the manager's cache keeps of a JobSet only what
// the controller reads (trimJobSet):
//
//   - every JobSet: its metadata (without managedFields and kubectl's last-applied configuration,
//     as every kind), spec.suspend and its whole status;
//   - a suspended JobSet: everything else too. The applier compares its templates with what it
//     would apply, and writes it (apply.Writable: a running JobSet is never rewritten; one
//     suspended again is applied whole, as it must be anyway);
//   - a running JobSet: each replicated job, its Job template reduced to its labels, parallelism
//     and completions (the elastic scale finds and resizes the node job by them);
//   - a finished JobSet (Completed or Failed, not suspended): no replicated jobs; the node job's
//     parallelism is kept in NodeParallelismAnnotation, which is never written to the server.
//
// So a cached JobSet may be read for its metadata and status (Finished, Active, the TrainJob
// status mirror), spec.suspend (Suspended) and its node job (NodeJob); nothing else of its spec.
// Whatever else a JobSet holds is read around the cache.
package cached

import (
	"strconv"

	batchv1 "k8s.io/api/batch/v1"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime"
)

// NodeParallelismAnnotation is written by the manager's cache on its copy of a finished JobSet,
// never on the server: it keeps the one thing still read of the replicated jobs it drops.
const NodeParallelismAnnotation = "cache.gantry.dev/node-parallelism"

// Suspended reports whether the JobSet is held back (spec.suspend), by Kueue or by its TrainJob.
func Suspended(js *jobsetv1alpha2.JobSet) bool {
	return ptr.Deref(js.Spec.Suspend, false)
}

// Finished reports whether a JobSet has completed or failed.
func Finished(js *jobsetv1alpha2.JobSet) bool {
	return apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetCompleted)) ||
		apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetFailed))
}

// Active reports whether pods of the JobSet still run.
func Active(js *jobsetv1alpha2.JobSet) bool {
	for _, rj := range js.Status.ReplicatedJobsStatus {
		if rj.Active > 0 {
			return true
		}
	}
	return false
}

// NodeJob finds the trainer's replicated job of a JobSet and its parallelism. index is -1 for a
// finished JobSet, cached without its replicated jobs; found is false when it has none.
func NodeJob(js *jobsetv1alpha2.JobSet) (index int, parallelism int32, found bool) {
	if v, ok := js.Annotations[NodeParallelismAnnotation]; ok && js.Spec.ReplicatedJobs == nil {
		p, err := strconv.ParseInt(v, 10, 32)
		return -1, int32(p), err == nil
	}
	i, p := nodeJobIndex(js)
	return i, p, i >= 0
}

func nodeJobIndex(js *jobsetv1alpha2.JobSet) (int, int32) {
	for i := range js.Spec.ReplicatedJobs {
		if rj := &js.Spec.ReplicatedJobs[i]; runtime.IsTrainerJob(rj) {
			return i, ptr.Deref(rj.Template.Spec.Parallelism, 1)
		}
	}
	return -1, 0
}

// trimJobSet leaves of a JobSet what the contract above keeps.
func trimJobSet(js *jobsetv1alpha2.JobSet) *jobsetv1alpha2.JobSet {
	js.ManagedFields = nil
	switch {
	case Suspended(js):
	case Finished(js):
		compactFinished(js)
	default:
		for i := range js.Spec.ReplicatedJobs {
			t := &js.Spec.ReplicatedJobs[i].Template
			*t = batchv1.JobTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: t.Labels},
				Spec:       batchv1.JobSpec{Parallelism: t.Spec.Parallelism, Completions: t.Spec.Completions},
			}
		}
	}
	return js
}

// compactFinished drops the replicated jobs of a finished JobSet, keeping its node job's
// parallelism in NodeParallelismAnnotation.
func compactFinished(js *jobsetv1alpha2.JobSet) {
	if js.Spec.ReplicatedJobs == nil {
		return
	}
	if i, parallelism := nodeJobIndex(js); i >= 0 {
		if js.Annotations == nil {
			js.Annotations = map[string]string{}
		}
		js.Annotations[NodeParallelismAnnotation] = strconv.Itoa(int(parallelism))
	}
	js.Spec.ReplicatedJobs = nil
}
