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

package cached_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
	kjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/cached"
	"github.com/gantry-ml/gantry/internal/render"
	"github.com/gantry-ml/gantry/internal/runtime/ref"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
	"github.com/gantry-ml/gantry/test/util"
)

// settledWire is one settled TrainJob's objects as the informers receive them: the TrainJob and
// its JobSet as JSON, the runtime snapshot as protobuf. name0 and uid0 are replaced per copy.
type settledWire struct{ trainJob, jobSet, snapshot []byte }

const (
	benchName = "tj-00000"
	benchUID  = "00000000-0000-0000-0000-000000000000"
)

// newSettledWire renders, with the controller's code, the objects of the TrainJob the benchmark
// and scale runs submit (test/perf), against the shipped torch runtime, and finishes them.
func newSettledWire(b *testing.B) settledWire {
	b.Helper()
	tj := utiltesting.MakeTrainJobWrapper("bench", benchName).
		RuntimeRef(trainer.ClusterTrainingRuntimeKind, "torch-distributed").
		Trainer(utiltesting.MakeTrainerWrapper().
			Container("pytorch/pytorch:2.13.0-cuda13.0-cudnn9-runtime", []string{"torchrun", "/workspace/train.py"}, nil).
			NumNodes(4).Obj()).
		Obj()
	tjYAML, err := yaml.Marshal(tj)
	if err != nil {
		b.Fatal(err)
	}
	rtFile := filepath.Join(util.RepoRoot(), "config/runtimes/torch-distributed.yaml")
	rtYAML, err := os.ReadFile(rtFile)
	if err != nil {
		b.Fatal(err)
	}
	in, err := render.Read([]render.Source{{Name: "trainjob", Data: bytes.NewReader(tjYAML)}, {Name: rtFile, Data: bytes.NewReader(rtYAML)}})
	if err != nil {
		b.Fatal(err)
	}
	in.TrainJob.UID = benchUID
	rt, err := render.NewRuntime()
	if err != nil {
		b.Fatal(err)
	}
	objs, err := render.Objects(context.Background(), rt, in)
	if err != nil {
		b.Fatal(err)
	}
	now := metav1.NewTime(time.Date(2026, 12, 5, 10, 0, 0, 0, time.UTC))
	var w settledWire
	for _, o := range objs {
		if o.GroupVersionKind() != jobsetv1alpha2.GroupVersion.WithKind("JobSet") {
			continue
		}
		js := &jobsetv1alpha2.JobSet{}
		mustConvert(b, o.Object, js)
		js.UID, js.ResourceVersion, js.CreationTimestamp = "JobSet-"+benchUID, "123456", now
		js.Status = jobsetv1alpha2.JobSetStatus{
			Conditions: []metav1.Condition{{Type: string(jobsetv1alpha2.JobSetCompleted), Status: metav1.ConditionTrue,
				Reason: "AllJobsCompleted", Message: "jobset completed successfully", LastTransitionTime: now}},
			TerminalState:        string(jobsetv1alpha2.JobSetCompleted),
			ReplicatedJobsStatus: []jobsetv1alpha2.ReplicatedJobStatus{{Name: "node", Succeeded: 1}},
		}
		w.jobSet = mustJSON(b, js)
	}
	// The snapshot is written by the controller, not rendered.
	cm, err := ref.NewSnapshot(in.TrainJob, in.Runtime)
	if err != nil {
		b.Fatal(err)
	}
	cm.UID, cm.ResourceVersion, cm.CreationTimestamp = "ConfigMap-"+benchUID, "123455", now
	if w.snapshot, err = cm.Marshal(); err != nil {
		b.Fatal(err)
	}
	done := in.TrainJob.DeepCopy()
	done.ResourceVersion, done.CreationTimestamp = "123457", now
	done.Status = trainer.TrainJobStatus{
		Conditions: []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue,
			Reason: "JobsCompleted", Message: "TrainJob is completed", LastTransitionTime: now}},
		JobsStatus: []trainer.JobStatus{{Name: "node", Succeeded: ptr.To[int32](1), Ready: ptr.To[int32](0),
			Active: ptr.To[int32](0), Failed: ptr.To[int32](0), Suspended: ptr.To[int32](0)}},
	}
	w.trainJob = mustJSON(b, done)
	if w.jobSet == nil || w.snapshot == nil {
		b.Fatalf("the render has no JobSet or snapshot ConfigMap")
	}
	return w
}

func mustConvert(b *testing.B, in map[string]any, out any) {
	b.Helper()
	data, err := json.Marshal(in)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		b.Fatal(err)
	}
}

func mustJSON(b *testing.B, v any) []byte {
	b.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// nth is the wire form of the i-th TrainJob: its own name and UIDs, as each object has them.
func nth(data []byte, i int) []byte {
	data = bytes.ReplaceAll(data, []byte(benchName), fmt.Appendf(nil, "tj-%05d", i))
	return bytes.ReplaceAll(data, []byte(benchUID), fmt.Appendf(nil, "00000000-0000-0000-0000-%012d", i))
}

// BenchmarkCachedSettledTrainJob reports the heap the manager's cache holds per settled TrainJob
// (B/trainjob): its TrainJob, JobSet and runtime snapshot decoded as the informers decode them and
// kept as the cache transform leaves them. It is the live part of the scale run's KiB per TrainJob
// (the rest is the garbage collector's headroom), measured in seconds instead of an hour.
func BenchmarkCachedSettledTrainJob(b *testing.B) {
	const n = 2000
	w := newSettledWire(b)
	wires := make([]settledWire, n)
	for i := range wires {
		wires[i] = settledWire{trainJob: nth(w.trainJob, i), jobSet: nth(w.jobSet, i), snapshot: nth(w.snapshot, i)}
	}
	decoders := map[string]func(settledWire) (any, error){
		"trainjob": func(w settledWire) (any, error) {
			tj := &trainer.TrainJob{}
			return tj, kjson.UnmarshalCaseSensitivePreserveInts(w.trainJob, tj)
		},
		"jobset": func(w settledWire) (any, error) {
			js := &jobsetv1alpha2.JobSet{}
			return js, kjson.UnmarshalCaseSensitivePreserveInts(w.jobSet, js)
		},
		"snapshot": func(w settledWire) (any, error) {
			cm := &corev1.ConfigMap{}
			return cm, cm.Unmarshal(w.snapshot)
		},
	}
	for b.Loop() {
		total := 0.0
		for kind, decode := range decoders {
			per := cachedBytes(b, wires, decode)
			b.ReportMetric(per, "B/"+kind+"-object")
			total += per
		}
		b.ReportMetric(total, "B/settled-trainjob")
	}
}

// cachedBytes is the heap held, per wire, by decoding each and keeping what Transform returns.
func cachedBytes(b *testing.B, wires []settledWire, decode func(settledWire) (any, error)) float64 {
	kept := make([]any, 0, len(wires))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, w := range wires {
		obj, err := decode(w)
		if err != nil {
			b.Fatal(err)
		}
		trimmed, err := cached.Transform(obj)
		if err != nil {
			b.Fatal(err)
		}
		kept = append(kept, trimmed)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(len(wires))
}
