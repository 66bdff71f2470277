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
	"cmp"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// Event is one event about a TrainJob or an object it owns.
type Event struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Kind    string    `json:"kind"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
}

// eventKinds are the kinds of objects whose events tell a TrainJob's story, as in the SDK.
var eventKinds = map[string]bool{"TrainJob": true, "JobSet": true, "Job": true, "Pod": true}

// childName matches the names JobSet gives a Job ("<jobset>-<replicated job>-<job index>") and
// its pods (the Job's name, "-<completion index>-" and five random characters).
var childName = regexp.MustCompile(`^(.+)-([0-9]+)(-[0-9]+-[a-z0-9]{5})?$`)

// Relevant reports whether an event of the namespace is about the TrainJob named job or one of
// its objects: the JobSet shares its name, Jobs and pods are named after the JobSet and a
// replicated job. rjobs lists the job's replicated jobs; empty accepts any. A plain name prefix
// would also take the pods of TrainJob "a-node" for TrainJob "a".
func Relevant(job string, rjobs map[string]bool, ev *corev1.Event) bool {
	o := ev.InvolvedObject
	if !eventKinds[o.Kind] {
		return false
	}
	if o.Kind == "TrainJob" || o.Kind == "JobSet" {
		return o.Name == job
	}
	rest, ok := strings.CutPrefix(o.Name, job+"-")
	if !ok {
		return false
	}
	m := childName.FindStringSubmatch(rest)
	if m == nil || (o.Kind == "Job") != (m[3] == "") {
		return false
	}
	return len(rjobs) == 0 || rjobs[m[1]]
}

// EventTime is when an event last happened. core/v1 events written through events.k8s.io/v1
// carry only eventTime (and series), older ones only the timestamps.
func EventTime(ev *corev1.Event) time.Time {
	switch {
	case ev.Series != nil && !ev.Series.LastObservedTime.IsZero():
		return ev.Series.LastObservedTime.Time
	case !ev.LastTimestamp.IsZero():
		return ev.LastTimestamp.Time
	case !ev.EventTime.IsZero():
		return ev.EventTime.Time
	case !ev.FirstTimestamp.IsZero():
		return ev.FirstTimestamp.Time
	default:
		return ev.CreationTimestamp.Time
	}
}

// Events keeps the events about the TrainJob named job, oldest first; rjobs as in Relevant.
func Events(job string, rjobs map[string]bool, all []corev1.Event) []Event {
	var out []Event
	for i := range all {
		ev := &all[i]
		if !Relevant(job, rjobs, ev) {
			continue
		}
		count := ev.Count
		if ev.Series != nil {
			count = ev.Series.Count
		}
		out = append(out, Event{
			Time:    EventTime(ev).UTC(),
			Type:    ev.Type,
			Reason:  ev.Reason,
			Kind:    ev.InvolvedObject.Kind,
			Object:  ev.InvolvedObject.Name,
			Message: strings.TrimSpace(ev.Message),
			Count:   count,
		})
	}
	slices.SortStableFunc(out, func(a, b Event) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		return cmp.Compare(a.Object, b.Object)
	})
	return out
}
