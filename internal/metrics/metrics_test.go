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

package metrics

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	utiltesting "github.com/gantry-ml/gantry/internal/util/testing"
)

func TestTrainJobsByStateAndRuntime(t *testing.T) {
	s := runtime.NewScheme()
	if err := trainer.AddToScheme(s); err != nil {
		t.Fatal(err)
	}
	done := utiltesting.MakeTrainJobWrapper("ns", "done").Obj()
	done.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobComplete, Status: metav1.ConditionTrue}}
	failed := utiltesting.MakeTrainJobWrapper("ns", "failed").Obj()
	failed.Status.Conditions = []metav1.Condition{{Type: trainer.TrainJobFailed, Status: metav1.ConditionTrue}}
	// The state is the command line's (trainjob.DeriveState): a job whose nodes run is Running,
	// one without pods yet Created, one waiting in a Kueue queue Queued; "Running" for all three
	// was the metric's own word once.
	training := utiltesting.MakeTrainJobWrapper("ns", "a").Obj()
	one := int32(1)
	training.Status.JobsStatus = []trainer.JobStatus{{Name: "node", Active: &one}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(
		training,
		utiltesting.MakeTrainJobWrapper("ns", "queued").Suspend(true).Label("kueue.x-k8s.io/queue-name", "q").Obj(),
		utiltesting.MakeTrainJobWrapper("ns", "b").Obj(),
		utiltesting.MakeTrainJobWrapper("ns", "paused").Suspend(true).Obj(),
		utiltesting.MakeTrainJobWrapper("ns", "own").RuntimeRef(trainer.TrainingRuntimeKind, "mine").Obj(),
		utiltesting.MakeTrainJobWrapper("ns", "remote").ManagedBy(trainer.ManagedByMultiKueue).Obj(),
		done, failed,
	).Build()
	want := `
# HELP kubeflow_trainer_trainjobs TrainJobs managed by this controller, by state (as gantry list shows it) and runtime.
# TYPE kubeflow_trainer_trainjobs gauge
kubeflow_trainer_trainjobs{runtime="mine",runtime_kind="TrainingRuntime",state="Created"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Complete"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Created"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Failed"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Queued"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Running"} 1
kubeflow_trainer_trainjobs{runtime="torch-distributed",runtime_kind="ClusterTrainingRuntime",state="Suspended"} 1
`
	collector := &stateCollector{}
	var reader client.Reader = c
	collector.reader.Store(&reader)
	if err := testutil.CollectAndCompare(collector, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
