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

package apply

import (
	"strconv"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"

	"github.com/gantry-ml/gantry/internal/runtime"
)

// CachedNodeParallelismAnnotation is written by the manager's cache on its copy of a finished
// JobSet, never on the server: the copy has no replicated jobs (CompactFinished), and this keeps
// the one thing still read of them, the node job's parallelism.
const CachedNodeParallelismAnnotation = "cache.gantry.dev/node-parallelism"

// Finished reports whether a JobSet has completed or failed.
func Finished(js *jobsetv1alpha2.JobSet) bool {
	return apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetCompleted)) ||
		apimeta.IsStatusConditionTrue(js.Status.Conditions, string(jobsetv1alpha2.JobSetFailed))
}

// CompactFinished drops the replicated jobs of a finished JobSet that is not suspended, for the
// cache: the controller reads such a JobSet's metadata and status (the status mirror, the TTL, the
// outcome finalizer) and, for an elastic TrainJob told to scale after the end, its node job's
// parallelism, which is kept in CachedNodeParallelismAnnotation. A replicated job is about 1.2 KiB
// of memory even without its pod template (a Job template is a large struct), the largest part of
// a settled TrainJob in the cache. It is nothing a write could need: a running JobSet is never
// rewritten (Writable), and one being suspended again is applied whole.
// It reports whether js is such a JobSet.
func CompactFinished(js *jobsetv1alpha2.JobSet) bool {
	if Suspended(js) || !Finished(js) {
		return false
	}
	if js.Spec.ReplicatedJobs == nil {
		return true
	}
	if i, parallelism := nodeJobIndex(js); i >= 0 {
		if js.Annotations == nil {
			js.Annotations = map[string]string{}
		}
		js.Annotations[CachedNodeParallelismAnnotation] = strconv.Itoa(int(parallelism))
	}
	js.Spec.ReplicatedJobs = nil
	return true
}

// NodeJob finds the trainer's replicated job of a JobSet, as cached, and its parallelism. index
// is -1 for a finished JobSet cached without its replicated jobs; found is false when it has none.
func NodeJob(js *jobsetv1alpha2.JobSet) (index int, parallelism int32, found bool) {
	if v, ok := js.Annotations[CachedNodeParallelismAnnotation]; ok && js.Spec.ReplicatedJobs == nil {
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
