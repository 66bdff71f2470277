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

package differential

import (
	"encoding/json"
	"fmt"

	reftrainer "github.com/kubeflow/trainer/v2/pkg/apis/trainer/v1alpha1"
	refconstants "github.com/kubeflow/trainer/v2/pkg/constants"
	reftesting "github.com/kubeflow/trainer/v2/pkg/util/testing"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"
	jobsetv1alpha2 "sigs.k8s.io/jobset/api/jobset/v1alpha2"
)

// The objects of Kubeflow Trainer v2.3.0's own integration suite (test/integration in its
// module), built with its own test wrappers, for the specs Gantry answers differently.

// upstreamRequests are the trainer resources of its controller suite.
var upstreamRequests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}

// UpstreamNamedJob is its webhook suite's "Should succeed to create TrainJob with name exactly
// 63 characters" (and the like with other names): a TrainJob on a ClusterTrainingRuntime of
// dataset-initializer, model-initializer and node jobs.
func UpstreamNamedJob(name string) *Case {
	rt := reftesting.MakeClusterTrainingRuntimeWrapper("upstream-runtime").Obj()
	tj := reftesting.MakeTrainJobWrapper("default", name).
		RuntimeRef(reftrainer.SchemeGroupVersion.WithKind(reftrainer.ClusterTrainingRuntimeKind), "upstream-runtime").Obj()
	return upstreamCase("named "+name, rt, tj)
}

// UpstreamDependsOn is its controller suite's "Should succeed to create TrainJob with OpenMPI
// TrainingRuntime", whose launcher job, listed before node, depends on node; depends names the
// job that depends (on launcher when it is node), and which job it waits for.
func UpstreamDependsOn(dependent, target string) *Case {
	spec := reftesting.MakeTrainingRuntimeSpecWrapper(reftesting.MakeTrainingRuntimeWrapper("default", "alpha").Spec).
		LauncherReplica().
		DependsOn(dependent, jobsetv1alpha2.DependsOn{Name: target, Status: jobsetv1alpha2.DependencyReady}).
		Replicas(1, refconstants.Launcher).
		WithMLPolicy(reftesting.MakeMLPolicyWrapper().WithNumNodes(1).
			WithMLPolicySource(*reftesting.MakeMLPolicySourceWrapper().
				MPIPolicy(ptr.To[int32](8), reftrainer.MPIImplementationOpenMPI, ptr.To("/root/.ssh"), ptr.To(false)).Obj()).Obj()).
		Container(refconstants.Node, refconstants.Node, "test:trainjob", []string{"trainjob"}, []string{"trainjob"}, upstreamRequests).
		Obj()
	rt := reftesting.MakeTrainingRuntimeWrapper("default", "alpha").RuntimeSpec(spec).Obj()
	tj := reftesting.MakeTrainJobWrapper("default", "alpha").
		RuntimeRef(reftrainer.GroupVersion.WithKind(reftrainer.TrainingRuntimeKind), "alpha").
		Trainer(reftesting.MakeTrainJobTrainerWrapper().NumNodes(2).
			Container("test:trainjob", []string{"trainjob"}, []string{"trainjob"}, upstreamRequests).Obj()).Obj()
	return upstreamCase(fmt.Sprintf("%s depends on %s", dependent, target), rt, tj)
}

// UpstreamFlux is its controller suite's "Should succeed to create TrainJob with Flux
// TrainingRuntime".
func UpstreamFlux() *Case {
	spec := reftesting.MakeTrainingRuntimeSpecWrapper(reftesting.MakeTrainingRuntimeWrapper("default", "alpha").Spec).
		WithMLPolicy(reftesting.MakeMLPolicyWrapper().WithNumNodes(2).
			WithMLPolicySource(*reftesting.MakeMLPolicySourceWrapper().FluxPolicy(ptr.To[int32](1)).Obj()).Obj()).
		Container(refconstants.Node, refconstants.Node, "test:trainjob", []string{"trainjob"}, []string{"trainjob"}, upstreamRequests).
		Obj()
	rt := reftesting.MakeTrainingRuntimeWrapper("default", "alpha").RuntimeSpec(spec).Obj()
	tj := reftesting.MakeTrainJobWrapper("default", "alpha").
		RuntimeRef(reftrainer.GroupVersion.WithKind(reftrainer.TrainingRuntimeKind), "alpha").
		Trainer(reftesting.MakeTrainJobTrainerWrapper().NumNodes(2).
			Container("test:trainjob", []string{"trainjob"}, []string{"trainjob"}, upstreamRequests).Obj()).Obj()
	return upstreamCase("flux", rt, tj)
}

// upstreamCase makes a case of the wrappers' objects as the apiserver would hold them: with
// their kind and apiVersion (the TrainJob wrapper sets only the version), and a uid, which the
// builds put in owner references.
func upstreamCase(name string, rt, tj any) *Case {
	c := &Case{Name: "upstream " + name, Runtime: toObject(rt), TrainJob: toObject(tj)}
	c.TrainJob["apiVersion"] = reftrainer.GroupVersion.String()
	c.TrainJob["kind"] = reftrainer.TrainJobKind
	c.TrainJob["metadata"].(map[string]any)["uid"] = "00000000-0000-0000-0000-000000000001"
	return c
}

func toObject(o any) map[string]any {
	data, err := json.Marshal(o)
	if err != nil {
		panic(err)
	}
	out := map[string]any{}
	if err := json.Unmarshal(data, &out); err != nil {
		panic(err)
	}
	return normalize(out)
}

// jobSetOf is the JobSet among a build's objects.
func jobSetOf(objs []map[string]any) (*jobsetv1alpha2.JobSet, error) {
	for _, o := range objs {
		if o["kind"] == "JobSet" {
			js := &jobsetv1alpha2.JobSet{}
			return js, convert(o, js)
		}
	}
	return nil, fmt.Errorf("no JobSet among %d objects", len(objs))
}
