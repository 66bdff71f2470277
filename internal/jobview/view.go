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

package jobview

import (
	"strconv"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	trainer "github.com/gantry-ml/gantry/api/trainer/v1alpha1"
	"github.com/gantry-ml/gantry/internal/multicluster"
	"github.com/gantry-ml/gantry/internal/trainjob"
)

// The view document's type. Scripts and agents read `gantry get -o json`; its fields only
// grow within a version, and a breaking change gets a new APIVersion.
const (
	APIVersion = "gantry.dev/v1"
	Kind       = "TrainJobView"
)

// Summary is what a list shows of one TrainJob.
type Summary struct {
	Name      string         `json:"name"`
	Namespace string         `json:"namespace"`
	UID       types.UID      `json:"uid"`
	State     trainjob.State `json:"state"`
	// Message explains the state: why it waits, what failed.
	Message string     `json:"message,omitempty"`
	Runtime RuntimeRef `json:"runtime"`
	// Nodes is the TrainJob's numNodes, or its runtime's default; 0 when neither is known.
	Nodes int32 `json:"nodes"`
	// DevicesPerNode counts the extended resources (GPUs) of one node; Device names them.
	DevicesPerNode int64              `json:"devicesPerNode,omitempty"`
	Device         string             `json:"device,omitempty"`
	Queue          string             `json:"queue,omitempty"`
	Workload       *trainjob.Workload `json:"workload,omitempty"`
	// MultiKueue is, for a manager cluster's job Kueue's MultiKueue runs, the worker it runs on
	// (or the Kueue state it waits in) and why the worker's pods are not shown, if they are not.
	MultiKueue *multicluster.Placement `json:"multiKueue,omitempty"`
	Progress   *Progress               `json:"progress,omitempty"`
	// Failures adds up the failed Jobs status.jobsStatus counts now; JobSet restarts clear them.
	Failures int32 `json:"failures"`
	// Retries are the unfinished Jobs' failed pods, when the Jobs were read and have some.
	Retries *trainjob.Retries `json:"retries,omitempty"`
	Created metav1.Time       `json:"created"`
	// Finished is when Complete or Failed became true.
	Finished *metav1.Time `json:"finished,omitempty"`
}

// RuntimeRef names the runtime a TrainJob uses.
type RuntimeRef struct {
	Kind string `json:"kind"`
	Name string `json:"name"`
}

// Progress is what the training code last reported (status.trainerStatus).
type Progress struct {
	Percent    *int32             `json:"percent,omitempty"`
	ETASeconds *int32             `json:"etaSeconds,omitempty"`
	Metrics    []trainer.Metric   `json:"metrics,omitempty"`
	Updated    *metav1.Time       `json:"updated,omitempty"`
	Numbers    map[string]float64 `json:"-"`
}

// View is everything `gantry get` tells about one TrainJob.
type View struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Summary    `json:",inline"`
	// RuntimeSummary is the runtime as resolved (the job's snapshot first), nil when unknown.
	RuntimeSummary *Runtime            `json:"runtimeSummary,omitempty"`
	Conditions     []metav1.Condition  `json:"conditions,omitempty"`
	Jobs           []trainer.JobStatus `json:"jobs,omitempty"`
	Steps          []Step              `json:"steps"`
	Events         []Event             `json:"events"`
}

// Summarize computes the summary of a TrainJob. rt is its runtime's summary when known (it
// supplies the defaults of numNodes and devices), wl its Kueue Workload.
func Summarize(tj *trainer.TrainJob, rt *Runtime, wl *trainjob.Workload) Summary {
	return SummarizeWith(tj, rt, wl, nil)
}

// SummarizeWith is Summarize with the JobSet's Jobs and pods, which tell a job retrying failed
// pods (Restarting) from one starting; ch nil is Summarize.
func SummarizeWith(tj *trainer.TrainJob, rt *Runtime, wl *trainjob.Workload, ch *trainjob.Children) Summary {
	d := trainjob.DeriveState(tj, wl, ch)
	s := Summary{
		Name: tj.Name, Namespace: tj.Namespace, UID: tj.UID,
		State: d.State, Message: d.Message,
		Runtime:  RuntimeRef{Kind: trainjob.RuntimeKind(tj), Name: tj.Spec.RuntimeRef.Name},
		Queue:    tj.Labels[trainjob.QueueLabel],
		Workload: wl,
		Created:  tj.CreationTimestamp,
		Progress: progress(tj.Status.TrainerStatus),
	}
	if ch != nil && !d.State.Terminal() {
		s.Retries = trainjob.RetriesOf(ch)
	}
	if rt != nil {
		s.Nodes, s.Device, s.DevicesPerNode = rt.Nodes, rt.Device, rt.DevicesPerNode
	}
	if t := tj.Spec.Trainer; t != nil {
		if t.NumNodes != nil {
			s.Nodes = *t.NumNodes
		}
		if t.ResourcesPerNode != nil {
			s.Device, s.DevicesPerNode = device(*t.ResourcesPerNode)
		}
	}
	for _, js := range tj.Status.JobsStatus {
		s.Failures += ptr.Deref(js.Failed, 0)
	}
	for _, t := range []string{trainer.TrainJobComplete, trainer.TrainJobFailed} {
		if c := meta.FindStatusCondition(tj.Status.Conditions, t); c != nil && c.Status == metav1.ConditionTrue {
			s.Finished = c.LastTransitionTime.DeepCopy()
		}
	}
	return s
}

// NewView assembles the view document from what the reader fetched.
func NewView(s Summary, rt *Runtime, tj *trainer.TrainJob, steps []Step, events []Event) *View {
	if steps == nil {
		steps = []Step{}
	}
	if events == nil {
		events = []Event{}
	}
	return &View{
		APIVersion: APIVersion, Kind: Kind, Summary: s, RuntimeSummary: rt,
		Conditions: tj.Status.Conditions, Jobs: tj.Status.JobsStatus,
		Steps: steps, Events: events,
	}
}

func progress(ts *trainer.TrainJobTrainerStatus) *Progress {
	if ts == nil {
		return nil
	}
	p := &Progress{Percent: ts.ProgressPercentage, ETASeconds: ts.EstimatedRemainingSeconds, Metrics: ts.Metrics}
	if !ts.LastUpdatedTime.IsZero() {
		p.Updated = ts.LastUpdatedTime.DeepCopy()
	}
	for _, m := range ts.Metrics {
		if f, err := strconv.ParseFloat(m.Value, 64); err == nil {
			if p.Numbers == nil {
				p.Numbers = map[string]float64{}
			}
			p.Numbers[m.Name] = f
		}
	}
	return p
}
